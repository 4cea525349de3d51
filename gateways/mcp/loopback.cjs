// Preloaded into dbhub natively (`node --require`): dbhub binds 0.0.0.0 unconditionally, and the
// native stack must not expose a database tool on public interfaces. Rewrites that one host to
// loopback; compose runs dbhub without a published port instead.
"use strict";
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (args[1] === "0.0.0.0") {
    args[1] = "127.0.0.1";
  }
  return listen.apply(this, args);
};
