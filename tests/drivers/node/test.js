// node-postgres against PivotDB, run by tests/drivers_test.go with PGHOST,
// PGPORT, PGUSER and PGDATABASE set. Prints one line per check and exits
// non-zero on the first failure.
'use strict';
const assert = require('node:assert/strict');
const { Client } = require('pg');

async function main() {
  const c = new Client();
  await c.connect();
  try {
    await c.query('CREATE TABLE node_t (id Uint64, i2 Int16, i4 Int32, i8 Int64, f4 Float, f8 Double, ' +
      'd Decimal(10,2), b Bool, s Utf8, bin String, j Json, dt Date, ts Timestamp, iv Interval, PRIMARY KEY (id))');

    // Parameterized queries go through the extended protocol.
    const ins = 'INSERT INTO node_t (id, i2, i4, i8, f4, f8, d, b, s, bin, j, dt, ts, iv) ' +
      'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)';
    const r = await c.query(ins, [1, -2, 40000, '9007199254740993', 1.5, 2.25, '12.34', true, 'héllo',
      Buffer.from([0, 1, 255]), JSON.stringify({ a: 1 }), '2024-02-29', '2024-01-02 03:04:05.123456', '1 hour']);
    assert.equal(r.rowCount, 1);
    await c.query({ text: ins, values: [2, null, null, null, null, null, null, null, null, null, null, null, null, null] });
    console.log('ok insert with parameters');

    const res = await c.query('SELECT * FROM node_t WHERE id = $1', [1]);
    assert.equal(res.rows.length, 1);
    const row = res.rows[0];
    assert.equal(row.id, '1'); // numeric arrives as a string
    assert.equal(row.i2, -2);
    assert.equal(row.i4, 40000);
    assert.equal(row.i8, '9007199254740993'); // int8 too, to keep precision
    assert.equal(row.f4, 1.5);
    assert.equal(row.f8, 2.25);
    assert.equal(row.d, '12.34');
    assert.equal(row.b, true);
    assert.equal(row.s, 'héllo');
    assert.deepEqual(row.bin, Buffer.from([0, 1, 255]));
    assert.deepEqual(row.j, { a: 1 });
    assert.ok(row.dt instanceof Date, 'date is a Date');
    assert.equal(row.dt.getFullYear(), 2024);
    assert.equal(row.dt.getMonth(), 1);
    assert.equal(row.dt.getDate(), 29);
    assert.ok(row.ts instanceof Date, 'timestamp is a Date');
    assert.equal(row.ts.getMilliseconds(), 123);
    assert.equal(row.iv.hours, 1);
    console.log('ok types to JS values');

    const nulls = await c.query('SELECT i2, s, bin, ts FROM node_t WHERE id = $1', [2]);
    assert.deepEqual(nulls.rows[0], { i2: null, s: null, bin: null, ts: null });
    console.log('ok NULLs');

    // A named prepared statement reused with different values.
    for (const id of [1, 2]) {
      const q = await c.query({ name: 'by_id', text: 'SELECT id, s FROM node_t WHERE id = $1', values: [id] });
      assert.equal(q.rows[0].id, String(id));
    }
    console.log('ok named statement');

    // rowMode array and a text parameter compared with a column.
    const arr = await c.query({ text: 'SELECT count(*), max(s) FROM node_t WHERE s = $1', values: ['héllo'], rowMode: 'array' });
    assert.deepEqual(arr.rows, [['1', 'héllo']]);
    console.log('ok rowMode array');

    // Transactions.
    await c.query('BEGIN');
    await c.query('DELETE FROM node_t WHERE id = $1', [1]);
    await c.query('ROLLBACK');
    assert.equal((await c.query('SELECT count(*) AS n FROM node_t')).rows[0].n, '2');
    console.log('ok transaction');

    // RETURNING over the extended protocol (and the simple one): the rows
    // of a write, with a bigserial key the server generates.
    await c.query('CREATE TABLE node_ret (id bigserial PRIMARY KEY, name Utf8)');
    const ret = await c.query('INSERT INTO node_ret (name) VALUES ($1), ($2) RETURNING id', ['a', 'b']);
    assert.equal(ret.rowCount, 2);
    assert.deepEqual(ret.rows.map((r) => r.id), ['1', '2']);
    assert.equal(ret.fields[0].name, 'id');
    const upd = await c.query("UPDATE node_ret SET name = name || '!' WHERE id = 2 RETURNING id, name");
    assert.deepEqual(upd.rows, [{ id: '2', name: 'b!' }]);
    const oc = await c.query('INSERT INTO node_ret (id, name) VALUES ($1, $2) ON CONFLICT (id) DO UPDATE SET name = excluded.name RETURNING *', [1, 'A']);
    assert.deepEqual(oc.rows, [{ id: '1', name: 'A' }]);
    const del = await c.query('DELETE FROM node_ret RETURNING id');
    assert.equal(del.rowCount, 2);
    console.log('ok RETURNING');

    // Errors carry the SQLSTATE.
    await assert.rejects(c.query(ins.replace('INSERT', 'INSERT'), [1, null, null, null, null, null, null, null, 'x', null, null, null, null, null]),
      (e) => e.code === '23505');
    await assert.rejects(c.query('SELECT nope FROM node_t'), (e) => e.code === '42703');
    console.log('ok errors');
  } finally {
    await c.end();
  }
}

main().then(() => console.log('node-postgres: all checks passed'), (e) => {
  console.error(e);
  process.exit(1);
});
