// lib.js - what the kubelet stand-in's tests share: the proto to load, a
// scratch directory, the agent started and stopped, inventories written,
// checks that count.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {spawn} = require('child_process');

const SRC = process.env.GP_SRC || path.join(__dirname, '..', '..');
const SHARED = process.env.GP_SHARED || path.join(SRC, '..', 'shared');
const VENDORED = path.join(SRC, 'src', 'node', 'proto', 'deviceplugin.proto');
const PUBLISHED = path.join(SHARED, 'k8s', 'deviceplugin-v1beta1-api.proto');

// The published proto when ../shared is there (and our copy checked
// against it, byte for byte below its header); else our copy.
function protoPath() {
  if (!fs.existsSync(PUBLISHED)) return VENDORED;
  const ours = fs.readFileSync(VENDORED, 'utf8');
  const mark = '// --- published text below ---\n';
  const body = ours.slice(ours.indexOf(mark) + mark.length);
  if (body !== fs.readFileSync(PUBLISHED, 'utf8')) {
    console.error('FAIL: src/node/proto/deviceplugin.proto differs from ' + PUBLISHED);
    process.exit(1);
  }
  return PUBLISHED;
}

const scratch = [];
function tmpdir(tag) {
  // unix socket paths must stay under 108 bytes; removed by finish()
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'gpk-' + tag + '-'));
  scratch.push(d);
  return d;
}

function uuid(i) {
  const h = (0x10000000 + i).toString(16);
  return `GPU-${h}-aaaa-bbbb-cccc-${String(i).padStart(12, '0')}`;
}

// n GPUs of 80 GiB, NVLinked in pairs (0-1, 2-3, ...).
function inventory(n, extra = {}) {
  const gpus = [];
  for (let i = 0; i < n; i++) {
    gpus.push(Object.assign({index: i, uuid: uuid(i), name: 'NVIDIA A100-SXM4-80GB',
      memory_mib: 81920, cc: '8.0', nvlink_peers: [i ^ 1], healthy: true}, (extra[i] || {})));
  }
  return {driver: '535.104.05', cuda: 12020, gpus};
}

function writeJson(file, obj) {
  const tmp = file + '.tmp';
  fs.writeFileSync(tmp, JSON.stringify(obj));
  fs.renameSync(tmp, file);
}

// Every process a test starts (agents, the double), killed when the test's
// process exits however it exits (a failed check, an exception, an early
// process.exit): none is left behind holding a socket or ctest's output.
const children = new Set();
function track(p) {
  children.add(p);
  p.on('exit', () => children.delete(p));
  return p;
}
process.on('exit', () => {
  for (const p of children) {
    try { p.kill('SIGKILL'); } catch (e) { /* gone already */ }
  }
});
for (const sig of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(sig, () => process.exit(1));

// Deadlines for what the agent must do: generous for the sanitizer build on
// a loaded 2-core machine (ctest's TIMEOUT bounds the whole test).
const WAIT_MS = 30000;

// Resolves once pred() (sync or async) holds, polling every stepMs; rejects
// naming what after ms.
async function waitUntil(pred, what, ms = WAIT_MS, stepMs = 50) {
  const until = Date.now() + ms;
  for (;;) {
    if (await pred()) return;
    if (Date.now() > until) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(stepMs);
  }
}

// The agent on dir's sockets; resolves once it is running.
function startAgent(args, env = {}) {
  const bin = process.env.GPUPLANE;
  if (!bin) throw new Error('GPUPLANE is not set');
  // the CDI spec into a scratch directory, never the host's /var/run/cdi
  const cdi = args.includes('--cdi-dir') || args.includes('--no-cdi') ? [] : ['--cdi-dir', tmpdir('cdi')];
  const p = track(spawn(bin, ['node', 'agent', ...cdi, ...args], {stdio: ['ignore', 'ignore', 'pipe'],
    env: Object.assign({}, process.env, env)}));
  p.log = '';
  p.stderr.on('data', (d) => { p.log += d; if (process.env.GP_VERBOSE) process.stderr.write(d); });
  p.done = new Promise((res) => p.on('exit', (code, sig) => res({code, sig})));
  return p;
}

async function stopAgent(p) {
  p.kill('SIGTERM');
  const r = await p.done;
  return r;
}

let failures = 0, passes = 0;
function check(cond, what, detail) {
  if (cond) { passes++; console.log('ok - ' + what); return; }
  failures++;
  console.log('not ok - ' + what + (detail !== undefined ? ': ' + JSON.stringify(detail) : ''));
}

async function expectError(promise, re, what) {
  try {
    const r = await promise;
    check(false, what, {answered: r});
  } catch (e) {
    check(re.test(e.details || e.message), what, e.details || e.message);
  }
}

function finish() {
  for (const d of scratch) fs.rmSync(d, {recursive: true, force: true});
  console.log(`${passes} passed, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function skipWithoutModules() {
  try {
    require.resolve('@grpc/grpc-js');
    require.resolve('@grpc/proto-loader');
  } catch (e) {
    console.log('skipped: tests/kubelet/node_modules absent (scripts/deps.sh runs npm ci)');
    process.exit(77);
  }
}

// The API server double (tests/apidouble) on a free port.
function startDouble() {
  const bin = process.env.GP_APIDOUBLE;
  if (!bin) throw new Error('GP_APIDOUBLE is not set');
  const p = track(spawn(bin, ['--port', '0'], {stdio: ['ignore', 'pipe', 'inherit']}));
  return new Promise((res, rej) => {
    let out = '';
    p.stdout.on('data', (d) => {
      out += d;
      const m = /port (\d+)/.exec(out);
      if (m) res({proc: p, port: Number(m[1])});
    });
    p.on('exit', (c) => rej(new Error('apidouble exited ' + c)));
  });
}

// One HTTP request to the double: {status, body (parsed)}.
function request(port, method, p, body, type = 'application/json') {
  const http = require('http');
  return new Promise((res, rej) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request({host: '127.0.0.1', port, method, path: p,
      headers: data ? {'Content-Type': type, 'Content-Length': Buffer.byteLength(data)} : {}}, (r) => {
      let s = '';
      r.on('data', (d) => { s += d; });
      r.on('end', () => res({status: r.statusCode, body: s ? JSON.parse(s) : null}));
    });
    req.on('error', rej);
    if (data) req.write(data);
    req.end();
  });
}

// A kubeconfig for the double on port, written in dir.
function kubeconfig(dir, port) {
  const file = path.join(dir, 'kubeconfig');
  fs.writeFileSync(file, `apiVersion: v1
kind: Config
clusters:
- name: double
  cluster: {server: "http://127.0.0.1:${port}"}
users:
- name: u
  user: {token: "t"}
contexts:
- name: c
  context: {cluster: double, user: u, namespace: default}
current-context: c
`);
  return file;
}

// What the scheduler does for a pod it places on node (DESIGN.md section 7):
// the annotations with phase allocating, then the Binding.
async function place(port, name, node, gpus) {
  const base = `/api/v1/namespaces/default/pods/${name}`;
  const cur = await request(port, 'GET', base);
  const patch = await request(port, 'PATCH', base, {metadata: {resourceVersion: cur.body.metadata.resourceVersion,
    annotations: {'gpuplane.io/node': node, 'gpuplane.io/gpus': gpus, 'gpuplane.io/phase': 'allocating'}}},
  'application/merge-patch+json');
  if (patch.status !== 200) throw new Error('patch ' + patch.status);
  const bind = await request(port, 'POST', base + '/binding', {apiVersion: 'v1', kind: 'Binding',
    metadata: {name, namespace: 'default', uid: cur.body.metadata.uid},
    target: {apiVersion: 'v1', kind: 'Node', name: node}});
  if (bind.status !== 201) throw new Error('bind ' + bind.status);
}

async function phase(port, name) {
  const p = await request(port, 'GET', `/api/v1/namespaces/default/pods/${name}`);
  return p.body.metadata.annotations['gpuplane.io/phase'];
}

module.exports = {protoPath, tmpdir, uuid, inventory, writeJson, startAgent, stopAgent, check,
  expectError, finish, sleep, skipWithoutModules, startDouble, request, kubeconfig, place, phase,
  WAIT_MS, waitUntil};
