#!/usr/bin/env node
// A complete maag bot in JavaScript: plays a random legal action each time it is asked.
//   node random_bot.js [ADDRESS TOKEN [GAMES] [GAME]]
//   ADDRESS: HOST:PORT, unix:PATH (a Unix socket) or fd:N (an inherited, connected socket);
//   ADDRESS and TOKEN left out or given as "-" come from $MAAG_CONNECT and $MAAG_TOKEN.
//   GAMES: stop after that many games; GAME: the game it offers to play (default $MAAG_GAME,
//   else heroes).
// It needs to know nothing of a game's rules: the referee lists the legal actions.
'use strict';

const { Client, parseAddress } = require('./maag');

class RandomBot {
  chooseTurn(observation) {
    const legal = observation.legal; // listed because the client asks for them (wantLegal)
    return { actions: [legal[Math.floor(Math.random() * legal.length)]] };
  }
}

// An argument, or the environment variable when it is missing or "-".
const argOrEnv = (arg, name) => (arg && arg !== '-' ? arg : process.env[name]) || undefined;

async function main([addressArg, tokenArg, games, game]) {
  const address = argOrEnv(addressArg, 'MAAG_CONNECT');
  const token = argOrEnv(tokenArg, 'MAAG_TOKEN');
  if (!address || !token) {
    console.error('usage: node random_bot.js [ADDRESS TOKEN [GAMES] [GAME]] (default $MAAG_CONNECT $MAAG_TOKEN)');
    process.exit(2);
  }
  const client = new Client({ ...parseAddress(address), token, name: 'js-random', wantLegal: true,
    games: [game || process.env.MAAG_GAME || 'heroes'],
    stopAfter: games ? Number(games) : null, bot: () => new RandomBot() });
  await client.connect();
  const records = await client.run();
  const score = records.reduce((s, r) => s + r.score, 0);
  console.log(`js-random: ${records.length} games, score ${score}`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((e) => { console.error(`js-random: ${e.message}`); process.exit(1); });
}

module.exports = { RandomBot };
