// mysql2 workload for the sandbox tests (integration/orm_test.go).
// Usage: node workload.js HOST PORT USER PASSWORD DATABASE RUN
// Prints a transcript of what it observed.
'use strict';
const mysql = require('mysql2/promise');

async function main() {
  const [host, port, user, password, database, run] = process.argv.slice(2);
  const out = [];
  const log = (s) => out.push(s);
  const c = await mysql.createConnection({ host, port: Number(port), user, password, database, multipleStatements: false });
  const [before] = await c.query("SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY 1");
  log('tables before: ' + before.map((r) => r.t).join(','));
  await c.query('CREATE TABLE IF NOT EXISTS m2_teams (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL UNIQUE)');
  await c.query('CREATE TABLE IF NOT EXISTS m2_players (id INT AUTO_INCREMENT PRIMARY KEY, team_id INT NOT NULL, ' +
    'name VARCHAR(50), goals INT DEFAULT 0, FOREIGN KEY (team_id) REFERENCES m2_teams(id))');
  const [ins] = await c.execute('INSERT INTO m2_teams (name) VALUES (?)', ['team-' + run]);
  log('team insertId>0: ' + (ins.insertId > 0) + ', affected: ' + ins.affectedRows);
  const teamId = ins.insertId;
  for (const [name, goals] of [['ann', 3], ['bob', 5]]) {
    await c.execute('INSERT INTO m2_players (team_id, name, goals) VALUES (?, ?, ?)', [teamId, name + run, goals]);
  }
  const [upd] = await c.execute('UPDATE m2_players SET goals = goals + ? WHERE team_id = ?', [1, teamId]);
  log('updated: ' + upd.affectedRows + ' changed: ' + upd.changedRows);
  const [rows, fields] = await c.execute(
    'SELECT t.name AS team, p.name AS player, p.goals FROM m2_players p JOIN m2_teams t ON t.id = p.team_id WHERE t.id = ? ORDER BY p.name', [teamId]);
  for (const r of rows) log('row ' + r.team.replace(/-\d+$/, '') + ' ' + r.player.replace(/\d+$/, '') + ' ' + r.goals);
  for (const f of fields) log('field ' + f.name + ' db=' + f.db + ' table=' + f.table + ' orgTable=' + f.orgTable);
  await c.beginTransaction();
  await c.execute('INSERT INTO m2_players (team_id, name) VALUES (?, ?)', [teamId, 'ghost']);
  await c.rollback();
  const [[g]] = await c.query("SELECT COUNT(*) AS n FROM m2_players WHERE name = 'ghost'");
  log('rolled back rows: ' + g.n);
  try {
    await c.execute('INSERT INTO m2_players (team_id, name) VALUES (?, ?)', [999999, 'orphan']);
    log('orphan: no error');
  } catch (e) {
    log('orphan: ' + e.errno + ' ' + e.sqlState + ' ' + (e.message.includes('_sqlfork') ? 'leaks a physical name' : 'clean'));
  }
  try {
    await c.execute('INSERT INTO m2_teams (name) VALUES (?)', ['team-' + run]);
    log('duplicate: no error');
  } catch (e) {
    log('duplicate: ' + e.errno + ' ' + e.sqlState + ' ' + e.message.replace(/team-\d+/, 'team-N'));
  }
  const [cols] = await c.query(
    "SELECT column_name AS c, data_type AS d, is_nullable AS n FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'm2_players' ORDER BY ordinal_position");
  log('columns: ' + cols.map((r) => r.c + ':' + r.d + ':' + r.n).join(' '));
  const [fks] = await c.query(
    "SELECT referenced_table_schema = DATABASE() AS same_db, referenced_table_name AS t FROM information_schema.key_column_usage WHERE table_schema = DATABASE() AND table_name = 'm2_players' AND referenced_table_name IS NOT NULL");
  log('fks: ' + fks.map((r) => r.same_db + ':' + r.t).join(' '));
  const [shown] = await c.query('SHOW TABLES');
  log('show tables: ' + shown.map((r) => Object.values(r)[0]).join(','));
  const [[cnt]] = await c.query('SELECT COUNT(*) AS n FROM m2_players');
  log('players: ' + cnt.n);
  await c.end();
  console.log(out.join('\n'));
}

main().catch((e) => { console.error(e); process.exit(1); });
