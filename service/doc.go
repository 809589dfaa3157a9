// Package service is Quarry's application layer: one method per MCP tool
// and resource. It wires catalog (find the dataset), planner (validate and
// plan), engine (execute) and materialize (caps and delivery) together, and
// owns query-level policy: timeouts, memory budgets, estimates and logging
// of each decision. The MCP layer only binds arguments and calls it.
package service
