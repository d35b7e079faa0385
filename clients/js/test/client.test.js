// Tests of maag.js against a scripted JSON-lines peer (a real TCP server in this process).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { Client, LineDecoder, ServerError, BotError, parseAddress } = require('../maag');
const { RandomBot } = require('../random_bot');

const LEGAL = [{ type: 'deploy', card: 'archer', to: [0, 0] }, { type: 'end_turn' }];
const OBS = { turn: 1, current: 1, ap: 3, observer: 1, hands: { 1: ['archer'], 2: [] } };
const send = (sock, msg) => sock.write(JSON.stringify({ v: 2, ...msg }) + '\n');

// Hand each line received on `sock` (parsed; the greeting as a string) to `script`, which
// answers on the socket; the lines are collected in `lines`.
function serveOn(sock, script, lines) {
  let buf = '';
  sock.on('data', (chunk) => {
    buf += chunk.toString('utf8');
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const text = buf.slice(0, i);
      buf = buf.slice(i + 1);
      const line = lines.length === 0 ? text : JSON.parse(text);
      lines.push(line);
      script(line, sock, lines.length - 1);
    }
  });
  sock.on('error', () => {});
}

// A server that runs `script` on each connection (see serveOn), listening on 127.0.0.1 or,
// with `path`, on a Unix socket. Resolves to {port, lines, close}.
function scriptedServer(script, path) {
  return new Promise((resolve) => {
    const lines = [];
    const sockets = new Set();
    const server = net.createServer((sock) => {
      sockets.add(sock);
      serveOn(sock, script, lines);
    });
    const ready = () => {
      const close = () => {
        for (const sock of sockets) sock.destroy();
        server.close();
      };
      resolve({ port: path ? undefined : server.address().port, lines, close });
    };
    if (path) server.listen(path, ready);
    else server.listen(0, '127.0.0.1', ready);
  });
}

// The scripted referee side of one short game: welcome, one your_turn, game over.
function oneGame(line, sock, i) {
  if (i === 1) {
    send(sock, { type: 'welcome', bot: 'js', server: 'scripted', max_frame: 65536 });
    send(sock, { type: 'game_start', game_id: 'g', game: 'nim', seat: 1, config: {}, time_control: {},
      opponent: 'x' });
    send(sock, { type: 'your_turn', game_id: 'g', observation: OBS, time_left_ms: 900, legal: LEGAL });
  } else if (i === 2) {
    send(sock, { type: 'game_over', game_id: 'g', winner: 1, reason: 'rules' });
  }
}

test('a whole game: greeting, hello, turn, game over', async (t) => {
  const srv = await scriptedServer((line, sock, i) => {
    if (i === 1) {
      send(sock, { type: 'welcome', bot: 'js', server: 'scripted', max_frame: 65536, max_rate: 0 });
      send(sock, { type: 'game_start', game_id: 'g1', game: 'heroes', seat: 1, config: { map: 'a-tiny' },
        time_control: { turn_ms: 1000, increment_ms: 0, bank_ms: 0, lag_ms: 50 }, opponent: 'x' });
      send(sock, { type: 'your_turn', game_id: 'g1', observation: OBS, time_left_ms: 900, bank_ms: 0,
        legal: LEGAL });
    } else if (i === 2) {
      send(sock, { type: 'result', game_id: 'g1', accepted: 1 });
      send(sock, { type: 'event', game_id: 'g1', seat: 2, kind: 'action', action: { type: 'end_turn' } });
      send(sock, { type: 'game_over', game_id: 'g1', winner: 1, reason: 'rules', replay_id: 'r1' });
    }
  });
  t.after(() => srv.close());
  const events = [];
  const seen = [];
  const client = new Client({ port: srv.port, token: 'tok', name: 'js-test', wantLegal: true, stopAfter: 1,
    bot: () => ({
      chooseTurn(obs, limit, game) { seen.push([obs, limit, game]); return { actions: [obs.legal[0]] }; },
      onEvent(e) { events.push(e.kind); },
    }) });
  const welcome = await client.connect();
  assert.equal(welcome.server, 'scripted');
  const records = await client.run();
  srv.close();
  assert.equal(srv.lines[0], 'MAAG 2 json');
  assert.deepEqual(srv.lines[1], { v: 2, type: 'hello', name: 'js-test', token: 'tok', games: ['heroes'],
    concurrency: 1, want_legal: true, events: 'turn' });
  assert.deepEqual(srv.lines[2], { v: 2, type: 'turn', game_id: 'g1', actions: [LEGAL[0]] });
  assert.equal(seen.length, 1);
  assert.equal(seen[0][0].ap, 3);
  assert.equal(seen[0][1].time_left_ms, 900);
  assert.equal(seen[0][1].turn_ms, 1000);
  assert.equal(seen[0][2].seat, 1);
  assert.deepEqual(events, ['action']);
  assert.equal(records.length, 1);
  assert.equal(records[0].score, 1);
  assert.equal(records[0].replay_id, 'r1');
});

test('after an illegal action the bot is asked again', async (t) => {
  const srv = await scriptedServer((line, sock, i) => {
    if (i === 1) {
      send(sock, { type: 'welcome', bot: 'js', server: 's', max_frame: 65536 });
      send(sock, { type: 'game_start', game_id: 'g', game: 'heroes', seat: 2, config: {}, time_control: {},
        opponent: 'x' });
      send(sock, { type: 'your_turn', game_id: 'g', observation: OBS, time_left_ms: 500, legal: LEGAL });
    } else if (i === 2) {
      send(sock, { type: 'result', game_id: 'g', accepted: 0, error: 'illegal_action', message: 'no' });
      send(sock, { type: 'your_turn', game_id: 'g', observation: OBS, time_left_ms: 400, legal: LEGAL });
    } else if (i === 3) {
      send(sock, { type: 'game_over', game_id: 'g', winner: null, reason: 'turn_limit' });
    }
  });
  t.after(() => srv.close());
  const client = new Client({ port: srv.port, token: 't', wantLegal: true, stopAfter: 1,
    bot: () => new RandomBot() });
  await client.connect();
  const records = await client.run();
  srv.close();
  assert.equal(srv.lines.length, 4);
  assert.equal(srv.lines[3].type, 'turn');
  assert.ok(LEGAL.some((a) => JSON.stringify(a) === JSON.stringify(srv.lines[3].actions[0])));
  assert.deepEqual(client.errors, [['g', 'illegal_action']]);
  assert.equal(records[0].score, 0.5);
});

test('a bot that throws resigns its game', async (t) => {
  const srv = await scriptedServer((line, sock, i) => {
    if (i === 1) {
      send(sock, { type: 'welcome', bot: 'js', server: 's', max_frame: 65536 });
      send(sock, { type: 'game_start', game_id: 'g', game: 'heroes', seat: 1, config: {}, time_control: {},
        opponent: 'x' });
      send(sock, { type: 'your_turn', game_id: 'g', observation: OBS, time_left_ms: 500 });
    } else if (i === 2) {
      send(sock, { type: 'game_over', game_id: 'g', winner: 2, reason: 'resign' });
    }
  });
  t.after(() => srv.close());
  const client = new Client({ port: srv.port, token: 't', stopAfter: 1,
    bot: () => ({ chooseTurn() { throw new Error('bug'); } }) });
  client.on('botError', () => {});
  await client.connect();
  await client.run();
  srv.close();
  assert.deepEqual(srv.lines[2], { v: 2, type: 'resign', game_id: 'g' });
});

test('a plan for a timed-out turn is dropped', async (t) => {
  let release;
  const gate = new Promise((r) => { release = r; });
  const srv = await scriptedServer((line, sock, i) => {
    if (i === 1) {
      send(sock, { type: 'welcome', bot: 'js', server: 's', max_frame: 65536 });
      send(sock, { type: 'game_start', game_id: 'g', game: 'heroes', seat: 1, config: {}, time_control: {},
        opponent: 'x' });
      send(sock, { type: 'your_turn', game_id: 'g', observation: OBS, time_left_ms: 5 });
      send(sock, { type: 'error', game_id: 'g', code: 'timeout', message: 'late' });
      send(sock, { type: 'event', game_id: 'g', seat: 1, kind: 'timeout' });
    }
  });
  t.after(() => srv.close());
  const client = new Client({ port: srv.port, token: 't', bot: () => ({
    async chooseTurn() { await gate; return { actions: [{ type: 'end_turn' }] }; },
    onEvent() { release(); },
  }) });
  await client.connect();
  await gate;
  await new Promise((r) => setImmediate(r));
  assert.equal(client.turnsSent, 0);
  client.close();
  srv.close();
  assert.equal(srv.lines.length, 2);
});

test('a game the server starts after stopAfter is ignored: no write after our end', async (t) => {
  // Under load the server pairs the bot into another game before it reads the bot's end of
  // the connection; the client must leave quietly, not fail with "write after end".
  const start = (id) => ({ type: 'game_start', game_id: id, game: 'heroes', seat: 1, config: {},
    time_control: {}, opponent: 'x' });
  const srv = await scriptedServer((line, sock, i) => {
    if (i === 1) {
      send(sock, { type: 'welcome', bot: 'js', server: 's', max_frame: 65536 });
      send(sock, start('g1'));
      send(sock, { type: 'your_turn', game_id: 'g1', observation: OBS, time_left_ms: 900, legal: LEGAL });
    } else if (i === 2) {
      // one chunk: the end of g1, then a new game and its first prompt
      sock.write([{ type: 'game_over', game_id: 'g1', winner: 1, reason: 'rules' }, start('g2'),
        { type: 'your_turn', game_id: 'g2', observation: OBS, time_left_ms: 900, legal: LEGAL }]
        .map((m) => JSON.stringify({ v: 2, ...m }) + '\n').join(''));
    }
  });
  t.after(() => srv.close());
  const started = [];
  const client = new Client({ port: srv.port, token: 't', wantLegal: true, stopAfter: 1, bot: () => ({
    onGameStart(info) { started.push(info.game_id); },
    chooseTurn(obs) { return { actions: [obs.legal[1]] }; },
  }) });
  await client.connect();
  const records = await client.run();
  srv.close();
  assert.deepEqual(records.map((r) => r.game.game_id), ['g1']);
  assert.deepEqual(started, ['g1']);
  assert.equal(srv.lines.length, 3); // greeting, hello, the one turn of g1
});

test('auth failure rejects connect with the server code', async (t) => {
  const srv = await scriptedServer((line, sock, i) => {
    if (i === 1) {
      send(sock, { type: 'error', code: 'auth_failed', message: 'unknown token' });
      sock.end();
    }
  });
  t.after(() => srv.close());
  const client = new Client({ port: srv.port, token: 'bad', bot: () => new RandomBot() });
  await assert.rejects(client.connect(), (e) => e instanceof ServerError && e.code === 'auth_failed');
  srv.close();
});

test('line decoder: CRLF, blank lines, split chunks, bad input', () => {
  const d = new LineDecoder(100);
  assert.deepEqual(d.feed(Buffer.from('{"type":"pong","v":2}\r\n\r\n{"type":')), [{ type: 'pong', v: 2 }]);
  assert.deepEqual(d.feed(Buffer.from('"pong","v":2,"id":2}\n')), [{ type: 'pong', v: 2, id: 2 }]);
  assert.throws(() => new LineDecoder().feed(Buffer.from('nope\n')), BotError);
  assert.throws(() => new LineDecoder().feed(Buffer.from('[1]\n')), BotError);
  assert.throws(() => new LineDecoder().feed(Buffer.from('{"type":"pong","v":3}\n')), BotError);
  assert.throws(() => new LineDecoder(10).feed(Buffer.from('x'.repeat(20))), BotError);
});

test('addresses', () => {
  assert.deepEqual(parseAddress('example.org:7878'), { host: 'example.org', port: 7878 });
  assert.deepEqual(parseAddress(':9'), { host: '127.0.0.1', port: 9 });
  assert.deepEqual(parseAddress('[::1]:80'), { host: '::1', port: 80 });
  assert.deepEqual(parseAddress('[unix]:80'), { host: 'unix', port: 80 });
  assert.deepEqual(parseAddress('fd:3'), { fd: 3 });
  assert.deepEqual(parseAddress('fd:0'), { fd: 0 });
  assert.deepEqual(parseAddress('unix:/run/maag/bot.sock'), { path: '/run/maag/bot.sock' });
  assert.deepEqual(parseAddress('unix:rel/a:b'), { path: 'rel/a:b' });
  const refused = [['nohost', /HOST:PORT/], ['host:0', /HOST:PORT/], ['host:1e3', /HOST:PORT/],
    ['fd:', /fd:N needs/], ['fd:x', /fd:N needs/], ['fd:-1', /fd:N needs/], ['fd:3.0', /fd:N needs/],
    ['unix:', /unix:PATH needs/], ['', /unix:PATH or fd:N/]];
  for (const [text, why] of refused) {
    assert.throws(() => parseAddress(text), (e) => e instanceof BotError && why.test(e.message), text);
  }
});

test("the opponent's turn in one turn_events reaches onEvent as one event per action", async (t) => {
  const theirs = [{ type: 'deploy', card: 'archer', to: [4, 2] }, { type: 'end_turn' }];
  const play = async (options) => {
    const srv = await scriptedServer((line, sock, i) => {
      if (i === 1) {
        send(sock, { type: 'welcome', bot: 'js', server: 'scripted', max_frame: 65536 });
        send(sock, { type: 'game_start', game_id: 'g', game: 'heroes', seat: 1, config: {}, time_control: {},
          opponent: 'x' });
        send(sock, { type: 'turn_events', game_id: 'g', seat: 2, actions: theirs });
        send(sock, { type: 'event', game_id: 'g', seat: 2, kind: 'disconnect' });
        send(sock, { type: 'game_over', game_id: 'g', winner: 1, reason: 'rules' });
      }
    });
    t.after(() => srv.close());
    const events = [];
    const client = new Client({ port: srv.port, token: 'tok', stopAfter: 1, ...options,
      bot: () => ({ chooseTurn() { return { actions: [] }; }, onEvent(e) { events.push(e); } }) });
    await client.connect();
    await client.run();
    return [srv.lines[1].events, events];
  };
  assert.equal((await play({ liveEvents: true }))[0], 'action'); // (asked for each action live)
  const [asked, events] = await play({});
  assert.equal(asked, 'turn');
  assert.deepEqual(events, [
    { type: 'event', v: 2, game_id: 'g', seat: 2, kind: 'action', action: theirs[0] },
    { type: 'event', v: 2, game_id: 'g', seat: 2, kind: 'action', action: theirs[1] },
    { v: 2, type: 'event', game_id: 'g', seat: 2, kind: 'disconnect' }]);
});

test('a Unix socket (unix:PATH)', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'maag-js-'));
  const sockPath = path.join(dir, 'referee.sock');
  const srv = await scriptedServer(oneGame, sockPath);
  t.after(() => { srv.close(); fs.rmSync(dir, { recursive: true, force: true }); });
  const client = new Client({ ...parseAddress(`unix:${sockPath}`), token: 'tok', wantLegal: true, stopAfter: 1,
    games: ['nim'], bot: () => new RandomBot() });
  assert.equal((await client.connect()).server, 'scripted');
  const records = await client.run();
  assert.equal(srv.lines[0], 'MAAG 2 json');
  assert.equal(srv.lines[1].token, 'tok');
  assert.equal(srv.lines[2].type, 'turn');
  assert.equal(records[0].score, 1);
  const missing = new Client({ path: path.join(dir, 'none.sock'), token: 't', bot: () => new RandomBot() });
  await assert.rejects(missing.connect(), (e) => e instanceof BotError && /ENOENT/.test(e.message));
});

test('an inherited socket (fd:N): random_bot.js with only $MAAG_CONNECT=fd:3 and $MAAG_TOKEN', async () => {
  // node gives a child's extra 'pipe' a connected socket pair: fd 3 in the child, a socket here
  const bot = path.join(__dirname, '..', 'random_bot.js');
  const child = spawn(process.execPath, [bot], {
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    env: { PATH: process.env.PATH, MAAG_CONNECT: 'fd:3', MAAG_TOKEN: 'fd-token', MAAG_GAME: 'nim' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  const lines = [];
  serveOn(child.stdio[3], (line, sock, i) => {
    oneGame(line, sock, i);
    if (i === 2) sock.end(); // the referee closes the connection: the bot then exits
  }, lines);
  const code = await new Promise((resolve) => child.on('close', resolve));
  assert.equal(code, 0, err);
  assert.equal(lines[0], 'MAAG 2 json');
  assert.deepEqual({ token: lines[1].token, games: lines[1].games }, { token: 'fd-token', games: ['nim'] });
  assert.equal(lines[2].type, 'turn');
  assert.match(out, /js-random: 1 games, score 1/);
});

test('an fd that is no socket is a clear error', async () => {
  const file = fs.openSync(__filename, 'r');
  try {
    const c1 = new Client({ ...parseAddress(`fd:${file}`), token: 't', bot: () => new RandomBot() });
    await assert.rejects(c1.connect(), (e) => e instanceof BotError && e.message === `fd:${file} is not a socket`);
    fs.fstatSync(file); // left open: not the client's
  } finally {
    fs.closeSync(file);
  }
  const c2 = new Client({ fd: 999999, token: 't', bot: () => new RandomBot() });
  await assert.rejects(c2.connect(), (e) => e instanceof BotError && /no such open file descriptor/.test(e.message));
});
