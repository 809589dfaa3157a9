'use strict';
// SQL quoting shared by the DuckDB scripts of this folder.

// quoteIdent quotes an SQL identifier ("a""b").
function quoteIdent(s) {
  return '"' + String(s).replace(/"/g, '""') + '"';
}

// quoteString quotes an SQL string literal ('a''b').
function quoteString(s) {
  return "'" + String(s).replace(/'/g, "''") + "'";
}

module.exports = { quoteIdent, quoteString };
