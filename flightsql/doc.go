// Package flightsql is Quarry's Arrow Flight SQL facade: `quarry serve
// --flightsql-addr 127.0.0.1:32010` exposes the catalog to BI tools, JDBC/
// ADBC/ODBC drivers and other engines over gRPC, next to MCP. It is built
// on arrow-go's server framework (flightsql.BaseServer and
// NewFlightServer) and owns no query logic: every statement goes through
// the service layer (service.PrepareSQLStatement), i.e. the same SQL
// front-end, planner, engine, query timeout and memory budgets as the
// advanced_query tool; rows are streamed as the engine's Arrow record
// batches (DoGet), never collected.
//
// What is served:
//   - CommandStatementQuery (Execute): one SELECT of Quarry's dialect.
//   - Prepared statements with parameters ($1, $2, ... bound from the
//     client's parameter batch, column i to $i+1; one row per execution).
//     Handles and tickets are stateless (they carry the statement text and
//     the bound values), so any server can answer them and nothing leaks
//     when a client forgets to close a statement.
//   - GetCatalogs, GetDbSchemas (empty: tables are dataset ids, which the
//     dialect takes unqualified), GetTables (with table schemas when asked),
//     GetTableTypes, GetSqlInfo (server name, version, read-only, no
//     transactions).
//   - Auth: the HTTP transport's bearer tokens and principals
//     (authorization metadata, transport.Authenticator); off loopback,
//     tokens are required (transport.RequireAuth).
//   - Every call is logged (slog) with a request id, also returned to the
//     client in the x-request-id header.
//
// Read-only: updates, ingestion, substrait plans, transactions and
// savepoints are refused with codes.PermissionDenied. Quarry errors map to
// gRPC codes by category (status.go) with the stable code and the hint in
// the message.
package flightsql
