#!/usr/bin/env node
// A complete maag bot in JavaScript: plays a random legal action each time it is asked.
//   node random_bot.js HOST:PORT TOKEN [GAMES] [GAME]
//   GAMES: stop after that many games; GAME: the game it offers to play (default heroes).
// It needs to know nothing of a game's rules: the referee lists the legal actions.
'use strict';

const { Client, parseAddress } = require('./maag');

class RandomBot {
  chooseTurn(observation) {
    const legal = observation.legal; // listed because the client asks for them (wantLegal)
    return { actions: [legal[Math.floor(Math.random() * legal.length)]] };
  }
}

async function main([address, token, games, game]) {
  const client = new Client({ ...parseAddress(address), token, name: 'js-random', wantLegal: true,
    games: [game || 'heroes'],
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
