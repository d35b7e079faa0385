// maag.js: a JSON-lines client for the maag referee (docs/protocol.md), for Node.js >= 18,
// with no dependencies. A bot is an object with chooseTurn(observation, limit, game); the
// Client connects, greets ("MAAG 2 json"), says hello and plays every game it is given,
// one fresh bot per game (see random_bot.js). It asks to hear the opponent's actions once
// its turn ends (hello events "turn", one turn_events message) unless the option liveEvents
// is set; either way the bot's onEvent gets one event per action, in order.
'use strict';

const fs = require('node:fs');
const net = require('node:net');
const { EventEmitter } = require('node:events');

const PROTOCOL_VERSION = 2;
const DEFAULT_MAX_LINE = 1 << 20; // bytes of one incoming line

// Error codes after which the server closes the connection (docs/protocol.md, section 4).
const GAME_ERRORS = new Set(['unknown_game', 'wrong_seat', 'not_your_turn', 'bad_action',
  'illegal_action', 'timeout']);

class BotError extends Error {}

class ServerError extends BotError {
  constructor(code, message) {
    super(`server error ${code}: ${message}`);
    this.code = code;
  }
}

// JSON-lines framing: feed() bytes, get back whole messages (objects). Throws BotError on a
// line that is not one JSON object or is longer than maxLine.
class LineDecoder {
  constructor(maxLine = DEFAULT_MAX_LINE) {
    this.maxLine = maxLine;
    this.buf = Buffer.alloc(0);
  }

  feed(chunk) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, chunk]) : chunk;
    const out = [];
    let nl;
    while ((nl = this.buf.indexOf(10)) >= 0) {
      let line = this.buf.subarray(0, nl);
      this.buf = this.buf.subarray(nl + 1);
      if (line.length && line[line.length - 1] === 13) line = line.subarray(0, line.length - 1);
      if (line.length > this.maxLine) throw new BotError(`line of ${line.length} bytes from the server`);
      const text = line.toString('utf8').trim();
      if (!text) continue;
      let msg;
      try {
        msg = JSON.parse(text);
      } catch (e) {
        throw new BotError(`the server sent invalid JSON: ${e.message}`);
      }
      if (msg === null || typeof msg !== 'object' || Array.isArray(msg) || typeof msg.type !== 'string') {
        throw new BotError('the server sent a line that is not a message');
      }
      if (msg.v !== PROTOCOL_VERSION) throw new BotError(`the server speaks protocol version ${msg.v}`);
      out.push(msg);
    }
    if (this.buf.length > this.maxLine) throw new BotError('line too long from the server');
    return out;
  }
}

function encode(msg) {
  return JSON.stringify({ v: PROTOCOL_VERSION, ...msg }) + '\n';
}

// One connection to a referee.
//   options: where (one of: host and port over TCP; path, a Unix socket; fd, an already
//   connected socket inherited as that file descriptor; parseAddress gives one of these),
//   token (required); name, games (['heroes']), concurrency (1),
//   wantLegal (false), stopAfter (close once this many games are over and none runs),
//   liveEvents (false: the opponent's actions come once its turn ends; true: as applied),
//   bot: a function returning a fresh bot object for each game.
// A bot object has chooseTurn(observation, limit, game) returning (or resolving to)
// {actions: [...]} or {resign: true}; optional onGameStart(game), onEvent(event),
// onResult(result), onGameOver(record). Events: 'welcome', 'message', 'sent', 'gameOver'.
class Client extends EventEmitter {
  constructor(options) {
    super();
    if (!options || !options.token || typeof options.bot !== 'function') {
      throw new BotError('a Client needs a token and a bot factory');
    }
    this.options = { host: '127.0.0.1', games: ['heroes'], concurrency: 1, wantLegal: false,
      name: 'js-bot', stopAfter: null, liveEvents: false, ...options };
    this.games = new Map(); // game_id -> {info, bot, prompt}
    this.records = [];
    this.errors = [];
    this.turnsSent = 0;
    this.welcome = null;
    this.socket = null;
    this.closing = false;
    this.decoder = new LineDecoder();
  }

  // Connect and log in; resolves to the welcome message, rejects with ServerError/BotError.
  connect() {
    return new Promise((resolve, reject) => {
      const o = this.options;
      this.done = new Promise((res, rej) => { this._finish = res; this._fail = rej; });
      this.done.catch(() => {}); // rejections are delivered by run()
      let socket;
      try {
        socket = openSocket(o);
      } catch (e) {
        return reject(e);
      }
      this.socket = socket;
      const greet = () => {
        socket.write(`MAAG ${PROTOCOL_VERSION} json\n`);
        this._send({ type: 'hello', name: o.name, token: o.token, games: o.games,
          concurrency: o.concurrency, want_legal: Boolean(o.wantLegal),
          events: o.liveEvents ? 'action' : 'turn' });
      };
      if (o.fd != null) greet(); // an inherited socket is connected already
      else socket.on('connect', greet);
      socket.on('data', (chunk) => {
        let msgs;
        try {
          msgs = this.decoder.feed(chunk);
        } catch (e) {
          return this._abort(e, reject);
        }
        for (const m of msgs) {
          this.emit('message', m);
          if (!this.welcome) {
            if (m.type === 'welcome') {
              this.welcome = m;
              this.emit('welcome', m);
              resolve(m);
            } else if (m.type === 'error') {
              return this._abort(new ServerError(m.code, m.message), reject);
            } else {
              return this._abort(new BotError(`expected welcome, got ${m.type}`), reject);
            }
          } else {
            this._dispatch(m);
          }
        }
      });
      socket.on('error', (e) => this._abort(new BotError(`connection: ${e.message}`), reject));
      socket.on('close', () => {
        if (!this.welcome) return reject(new BotError('the server closed the connection before welcome'));
        if (this.games.size && !this.closing) {
          this._fail(new BotError(`the server closed the connection with ${this.games.size} game(s) running`));
        } else {
          this._finish(this.records);
        }
      });
    });
  }

  // Resolves to the game records once the connection ends (or stopAfter games are over).
  run() {
    if (!this.done) throw new BotError('call connect() first');
    return this.done;
  }

  // Close the connection (after what was sent has been written).
  close() {
    this.closing = true;
    const socket = this.socket;
    if (socket && !socket.destroyed) socket.end(() => socket.destroy());
  }

  _abort(err, reject) {
    if (reject && !this.welcome) reject(err);
    if (this._fail) this._fail(err);
    this.closing = true;
    if (this.socket) this.socket.destroy();
  }

  _send(msg) {
    // After close() has ended our side, the server may still be sending (it can pair us into a
    // new game before it reads our end): writing then would fail with "write after end".
    if (!this.socket || this.socket.destroyed || this.socket.writableEnded) return;
    this.emit('sent', msg);
    this.socket.write(encode(msg));
  }

  async _call(game, method, ...args) {
    if (typeof game.bot[method] !== 'function') return;
    try {
      await game.bot[method](...args);
    } catch (e) {
      this._botFailed(game, e);
    }
  }

  _botFailed(game, err) {
    this.emit('botError', err, game.info.game_id);
    if (this.games.has(game.info.game_id)) {
      game.prompt += 1;
      this._send({ type: 'resign', game_id: game.info.game_id });
    }
  }

  _dispatch(m) {
    const game = this.games.get(m.game_id);
    switch (m.type) {
      case 'game_start': {
        if (game) return; // a reconnect repeats game_start: keep the bot
        if (this.closing) return; // we are leaving: the server forfeits a game it started meanwhile
        const info = { game_id: m.game_id, game: m.game, seat: m.seat, config: m.config,
          time_control: m.time_control, opponent: m.opponent };
        const g = { info, bot: this.options.bot(), prompt: 0 };
        this.games.set(m.game_id, g);
        this._call(g, 'onGameStart', info);
        return;
      }
      case 'your_turn':
        if (game) this._choose(game, m);
        return;
      case 'event':
        if (game && m.kind === 'timeout' && m.seat === game.info.seat) game.prompt += 1; // turn ended
        if (game) this._call(game, 'onEvent', m);
        return;
      case 'turn_events': // the opponent's turn: to the bot as the events it stands for, in order
        if (game) {
          for (const action of m.actions) {
            this._call(game, 'onEvent', { type: 'event', v: m.v, game_id: m.game_id, seat: m.seat,
              kind: 'action', action });
          }
        }
        return;
      case 'result':
        if (m.error) this.errors.push([m.game_id, m.error]);
        if (game) this._call(game, 'onResult', m);
        return;
      case 'game_over': {
        if (!game) return;
        this.games.delete(m.game_id);
        game.prompt += 1;
        const record = { game: game.info, winner: m.winner, reason: m.reason, replay_id: m.replay_id ?? null,
          score: m.winner == null ? 0.5 : (m.winner === game.info.seat ? 1 : 0) };
        this.records.push(record);
        this._call(game, 'onGameOver', record);
        this.emit('gameOver', record);
        const stop = this.options.stopAfter;
        if (stop != null && this.records.length >= stop && this.games.size === 0) this.close();
        return;
      }
      case 'error':
        this.errors.push([m.game_id ?? null, m.code]);
        if (m.game_id == null && !GAME_ERRORS.has(m.code)) {
          this._abort(new ServerError(m.code, m.message));
        } else if (game && m.code === 'timeout') {
          game.prompt += 1; // the turn is over: a plan still being made is stale
        }
        return;
      default: // pong, and message types added in later versions
    }
  }

  async _choose(game, m) {
    game.prompt += 1;
    const prompt = game.prompt;
    const tc = game.info.time_control || {};
    const limit = { time_left_ms: m.time_left_ms, bank_ms: m.bank_ms ?? 0, turn_ms: tc.turn_ms ?? null,
      increment_ms: tc.increment_ms ?? null, lag_ms: tc.lag_ms ?? null };
    const observation = { ...m.observation, legal: m.legal ?? null };
    let result;
    try {
      result = await game.bot.chooseTurn(observation, limit, game.info);
    } catch (e) {
      return this._botFailed(game, e);
    }
    if (prompt !== game.prompt || !this.games.has(game.info.game_id)) return; // the turn moved on
    if (result && result.resign) {
      game.prompt += 1;
      this._send({ type: 'resign', game_id: game.info.game_id });
    } else if (result && Array.isArray(result.actions) && result.actions.length) {
      this.turnsSent += 1;
      this._send({ type: 'turn', game_id: game.info.game_id, actions: result.actions });
    } else {
      this._botFailed(game, new BotError('chooseTurn must return {actions: [...]} or {resign: true}'));
    }
  }
}

// The socket for a Client's options: {fd}, {path} or {host, port}.
function openSocket(o) {
  if (o.fd != null) {
    const fd = o.fd;
    if (!Number.isInteger(fd) || fd < 0) throw new BotError(`fd must be a file descriptor number, not ${fd}`);
    let stat;
    try {
      stat = fs.fstatSync(fd);
    } catch (e) {
      throw new BotError(`fd:${fd}: no such open file descriptor (${e.code})`);
    }
    if (!stat.isSocket()) throw new BotError(`fd:${fd} is not a socket`);
    try {
      return new net.Socket({ fd, readable: true, writable: true });
    } catch (e) {
      throw new BotError(`fd:${fd} is not a stream socket (${e.message})`);
    }
  }
  if (o.path != null) return net.createConnection({ path: o.path });
  return net.createConnection({ host: o.host, port: o.port });
}

const ADDRESS_FORMS = 'HOST:PORT, [V6]:PORT, :PORT, unix:PATH or fd:N';

// Parse a connect address (what $MAAG_CONNECT, --connect and {connect} hold) into Client
// options: "HOST:PORT" ("[v6]:PORT"; ":PORT" means 127.0.0.1) -> {host, port};
// "unix:PATH" (a Unix socket) -> {path}; "fd:N" (an already connected socket inherited as
// file descriptor N, as a sandboxed bot gets it) -> {fd}. The prefixes win: a host really
// named unix or fd is written "[unix]:PORT".
function parseAddress(text) {
  if (typeof text !== 'string') throw new BotError(`an address must look like ${ADDRESS_FORMS}, not ${text}`);
  if (text.startsWith('fd:')) {
    const n = text.slice(3);
    if (!/^[0-9]{1,9}$/.test(n)) throw new BotError(`fd:N needs a file descriptor number N >= 0, not ${text}`);
    return { fd: Number(n) };
  }
  if (text.startsWith('unix:')) {
    const path = text.slice(5);
    if (!path || path.includes('\0')) throw new BotError(`unix:PATH needs the path of a Unix socket, not ${text}`);
    return { path };
  }
  const i = text.lastIndexOf(':');
  const digits = text.slice(i + 1);
  const port = Number(digits);
  if (i < 0 || !/^[0-9]+$/.test(digits) || port <= 0 || port > 65535) {
    throw new BotError(`an address must look like ${ADDRESS_FORMS}, not ${text}`);
  }
  return { host: text.slice(0, i).replace(/^\[|\]$/g, '') || '127.0.0.1', port };
}

module.exports = { Client, BotError, ServerError, LineDecoder, encode, parseAddress, PROTOCOL_VERSION };
