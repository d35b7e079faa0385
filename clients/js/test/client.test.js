// Tests of maag.js against a scripted JSON-lines peer (a real TCP server in this process).
'use strict';

const test = require('node:test');
const assert = require('node:assert/strict');
const net = require('node:net');
const { Client, LineDecoder, ServerError, BotError, parseAddress } = require('../maag');
const { RandomBot } = require('../random_bot');

const LEGAL = [{ type: 'deploy', card: 'archer', to: [0, 0] }, { type: 'end_turn' }];
const OBS = { turn: 1, current: 1, ap: 3, observer: 1, hands: { 1: ['archer'], 2: [] } };
const send = (sock, msg) => sock.write(JSON.stringify({ v: 1, ...msg }) + '\n');

// A server that hands each received line (parsed; the greeting as a string) to `script`,
// which answers on the socket. Resolves to {port, lines, close}.
function scriptedServer(script) {
  return new Promise((resolve) => {
    const lines = [];
    const sockets = new Set();
    const server = net.createServer((sock) => {
      sockets.add(sock);
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
    });
    server.listen(0, '127.0.0.1', () => {
      const close = () => {
        for (const sock of sockets) sock.destroy();
        server.close();
      };
      resolve({ port: server.address().port, lines, close });
    });
  });
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
  assert.equal(srv.lines[0], 'MAAG 1 json');
  assert.deepEqual(srv.lines[1], { v: 1, type: 'hello', name: 'js-test', token: 'tok', games: ['heroes'],
    concurrency: 1, want_legal: true });
  assert.deepEqual(srv.lines[2], { v: 1, type: 'turn', game_id: 'g1', actions: [LEGAL[0]] });
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
  assert.deepEqual(srv.lines[2], { v: 1, type: 'resign', game_id: 'g' });
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
        .map((m) => JSON.stringify({ v: 1, ...m }) + '\n').join(''));
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
  assert.deepEqual(d.feed(Buffer.from('{"type":"pong","v":1}\r\n\r\n{"type":')), [{ type: 'pong', v: 1 }]);
  assert.deepEqual(d.feed(Buffer.from('"pong","v":1,"id":2}\n')), [{ type: 'pong', v: 1, id: 2 }]);
  assert.throws(() => new LineDecoder().feed(Buffer.from('nope\n')), BotError);
  assert.throws(() => new LineDecoder().feed(Buffer.from('[1]\n')), BotError);
  assert.throws(() => new LineDecoder().feed(Buffer.from('{"type":"pong","v":2}\n')), BotError);
  assert.throws(() => new LineDecoder(10).feed(Buffer.from('x'.repeat(20))), BotError);
});

test('addresses', () => {
  assert.deepEqual(parseAddress('example.org:7878'), { host: 'example.org', port: 7878 });
  assert.deepEqual(parseAddress(':9'), { host: '127.0.0.1', port: 9 });
  assert.throws(() => parseAddress('nohost'), BotError);
});
