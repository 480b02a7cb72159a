// Adapter for ../shared/corpus/check-split.mjs: exports split(sql) backed by the built splitSql.
const path = require('node:path');

const dist = path.join(__dirname, '..', 'packages', 'core', 'dist');

function loadSplitSql() {
  try {
    const core = require(path.join(dist, 'index.js'));
    if (typeof core.splitSql === 'function') return core.splitSql;
  } catch {
    // The package entry may not build yet while other modules are in progress; the parser stands alone.
  }
  return require(path.join(dist, 'parser', 'index.js')).splitSql;
}

const splitSql = loadSplitSql();

module.exports = { split: (sql) => splitSql(sql) };
