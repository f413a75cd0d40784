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

// The agent on dir's sockets; resolves once it is running.
function startAgent(args, env = {}) {
  const bin = process.env.GPUPLANE;
  if (!bin) throw new Error('GPUPLANE is not set');
  // the CDI spec into a scratch directory, never the host's /var/run/cdi
  const cdi = args.includes('--cdi-dir') || args.includes('--no-cdi') ? [] : ['--cdi-dir', tmpdir('cdi')];
  const p = spawn(bin, ['node', 'agent', ...cdi, ...args], {stdio: ['ignore', 'ignore', 'pipe'],
    env: Object.assign({}, process.env, env)});
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

module.exports = {protoPath, tmpdir, uuid, inventory, writeJson, startAgent, stopAgent, check,
  expectError, finish, sleep, skipWithoutModules};
