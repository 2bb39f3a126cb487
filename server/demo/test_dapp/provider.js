// knowhow's EIP-1193 test provider: a script OF THE SERVED test-dapp page (the demo server adds it
// to index.html). It stands in for the MetaMask extension with deterministic fake results, so a
// scripted agent can connect, sign and send. knowhow's browser tools never inject anything.
(function () {
  "use strict";
  var ACCOUNTS = [
    "0x5cfe73b6021e818b776b421b1c4db2474086a7e1",
    "0x09781764c08de8ca82e156bbf156a3ca217c7950",
  ];
  var CHAIN_ID = "0x539"; // 1337, a local test chain
  var connected = false;
  var listeners = {};

  // A deterministic 32-bit FNV-1a hash spread to n hex digits: same request, same fake result.
  function fakeHex(text, digits) {
    var out = "";
    var seed = 0x811c9dc5;
    while (out.length < digits) {
      for (var i = 0; i < text.length; i++) {
        seed ^= text.charCodeAt(i);
        seed = Math.imul(seed, 0x01000193) >>> 0;
      }
      out += ("00000000" + seed.toString(16)).slice(-8);
      text = out;
    }
    return "0x" + out.slice(0, digits);
  }

  function emit(event, value) {
    (listeners[event] || []).slice().forEach(function (fn) { fn(value); });
  }

  function rpcError(code, message) {
    var error = new Error(message);
    error.code = code;
    return error;
  }

  var handlers = {
    eth_requestAccounts: function () {
      if (!connected) {
        connected = true;
        emit("connect", { chainId: CHAIN_ID });
        emit("accountsChanged", ACCOUNTS.slice(0, 1));
      }
      return ACCOUNTS.slice(0, 1);
    },
    eth_accounts: function () { return connected ? ACCOUNTS.slice(0, 1) : []; },
    eth_coinbase: function () { return connected ? ACCOUNTS[0] : null; },
    eth_chainId: function () { return CHAIN_ID; },
    net_version: function () { return "1337"; },
    eth_blockNumber: function () { return "0x1"; },
    eth_getBalance: function () { return "0x8ac7230489e80000"; }, // 10 ETH
    eth_gasPrice: function () { return "0x3b9aca00"; },
    eth_estimateGas: function () { return "0x5208"; },
    eth_getTransactionCount: function () { return "0x0"; },
    eth_getCode: function () { return "0x"; },
    eth_getTransactionReceipt: function () { return null; },
    wallet_getPermissions: function () {
      return connected ? [{ parentCapability: "eth_accounts" }] : [];
    },
    wallet_requestPermissions: function () {
      connected = true;
      emit("accountsChanged", ACCOUNTS.slice(0, 1));
      return [{ parentCapability: "eth_accounts" }];
    },
    personal_sign: function (params) { return fakeHex("personal_sign" + JSON.stringify(params), 130); },
    eth_signTypedData_v4: function (params) {
      return fakeHex("eth_signTypedData_v4" + JSON.stringify(params), 130);
    },
    eth_sendTransaction: function (params) {
      return fakeHex("eth_sendTransaction" + JSON.stringify(params), 64);
    },
  };

  function needsAccount(method) {
    return method === "personal_sign" || method === "eth_signTypedData_v4" || method === "eth_sendTransaction";
  }

  var provider = {
    isMetaMask: true,
    isKnowhowTestProvider: true,
    request: function (args) {
      var method = args && args.method;
      var handler = handlers[method];
      if (!handler) {
        return Promise.reject(rpcError(4200, "The test provider does not support " + method));
      }
      if (needsAccount(method) && !connected) {
        return Promise.reject(rpcError(4100, "Connect an account first"));
      }
      return Promise.resolve(handler(args.params || []));
    },
    on: function (event, fn) {
      (listeners[event] = listeners[event] || []).push(fn);
      return provider;
    },
    removeListener: function (event, fn) {
      listeners[event] = (listeners[event] || []).filter(function (f) { return f !== fn; });
      return provider;
    },
    isConnected: function () { return true; },
  };

  var info = Object.freeze({
    uuid: "6f1c2f9e-2a55-4a5e-9a53-0c1d2e3f4a5b",
    name: "knowhow test provider",
    icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' width='32' height='32'/%3E",
    rdns: "dev.knowhow.testprovider",
  });

  function announce() {
    window.dispatchEvent(
      new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info: info, provider: provider }) })
    );
  }

  window.ethereum = provider;
  window.addEventListener("eip6963:requestProvider", announce);
  announce();
})();
