// kubelet.js - a kubelet stand-in for the device plugin tests, on a real
// gRPC implementation (@grpc/grpc-js) and the published device plugin API
// (v1beta1 api.proto, ../shared/k8s/deviceplugin-v1beta1-api.proto): it
// serves Registration on DIR/kubelet.sock, calls a plugin's
// GetDevicePluginOptions, ListAndWatch, GetPreferredAllocation, Allocate
// and PreStartContainer on the socket it registered, and restarts as a
// kubelet does (its socket removed and created again).
'use strict';
const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const {WAIT_MS} = require('./lib');

function loadApi(protoPath) {
  const def = protoLoader.loadSync(protoPath, {keepCase: true, longs: String, defaults: true});
  return grpc.loadPackageDefinition(def).v1beta1;
}

class Kubelet {
  constructor(api, dir) {
    this.api = api;
    this.dir = dir;
    this.sock = path.join(dir, 'kubelet.sock');
    this.registrations = [];
    this.waiters = [];
    this.server = null;
  }

  // Serves Registration; every Register is recorded (and accepted).
  async start() {
    try { fs.unlinkSync(this.sock); } catch (e) { /* none */ }
    const server = new grpc.Server();
    server.addService(this.api.Registration.service, {
      Register: (call, cb) => {
        this.registrations.push(call.request);
        cb(null, {});
        this.waiters = this.waiters.filter((w) => !w());
      },
    });
    await new Promise((res, rej) => server.bindAsync('unix:' + this.sock,
      grpc.ServerCredentials.createInsecure(), (err) => err ? rej(err) : res()));
    this.server = server;
  }

  // A kubelet going away: its server stopped, its socket removed.
  async stop() {
    if (!this.server) return;
    await new Promise((res) => this.server.tryShutdown(() => res()));
    this.server.forceShutdown();
    this.server = null;
    try { fs.unlinkSync(this.sock); } catch (e) { /* gone */ }
  }

  // Resolves once pred(registrations) holds (or rejects after ms: lib.WAIT_MS).
  waitRegistrations(pred, ms = WAIT_MS) {
    return new Promise((res, rej) => {
      const check = () => { if (pred(this.registrations)) { res(this.registrations); return true; } return false; };
      if (check()) return;
      const t = setTimeout(() => rej(new Error('no registration: ' + JSON.stringify(this.registrations))), ms);
      this.waiters.push(() => { if (check()) { clearTimeout(t); return true; } return false; });
    });
  }

  plugin(endpoint) {
    return new Plugin(this.api, path.join(this.dir, endpoint));
  }
}

function unary(client, method, req) {
  return new Promise((res, rej) => client[method](req, {deadline: Date.now() + WAIT_MS},
    (err, resp) => err ? rej(err) : res(resp)));
}

class Plugin {
  constructor(api, sock) {
    this.client = new api.DevicePlugin('unix:' + sock, grpc.credentials.createInsecure());
  }
  options() { return unary(this.client, 'GetDevicePluginOptions', {}); }
  preferred(requests) { return unary(this.client, 'GetPreferredAllocation', {container_requests: requests}); }
  allocate(containers) {
    return unary(this.client, 'Allocate', {container_requests: containers.map((ids) => ({devices_ids: ids}))});
  }
  preStart(ids) { return unary(this.client, 'PreStartContainer', {devices_ids: ids}); }

  // ListAndWatch: every list received, and waitFor(pred) on the latest.
  watch() {
    const stream = this.client.ListAndWatch({});
    const w = {lists: [], waiters: [], ended: false, stream};
    stream.on('data', (m) => {
      w.lists.push(m.devices);
      w.waiters = w.waiters.filter((f) => !f());
    });
    stream.on('error', () => { w.ended = true; w.waiters = w.waiters.filter((f) => !f()); });
    stream.on('end', () => { w.ended = true; w.waiters = w.waiters.filter((f) => !f()); });
    w.waitFor = (pred, ms = WAIT_MS) => new Promise((res, rej) => {
      const check = () => {
        const last = w.lists[w.lists.length - 1];
        if (last && pred(last)) { res(last); return true; }
        return false;
      };
      if (check()) return;
      const t = setTimeout(() => rej(new Error('ListAndWatch: not seen; last ' +
        JSON.stringify(w.lists[w.lists.length - 1]))), ms);
      w.waiters.push(() => { if (check()) { clearTimeout(t); return true; } return false; });
    });
    w.cancel = () => stream.cancel();
    return w;
  }
  close() { this.client.close(); }
}

module.exports = {loadApi, Kubelet};
