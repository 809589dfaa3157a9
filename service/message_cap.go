package service

import (
	"github.com/quarrydb/quarry/internal/qerr"
	"github.com/quarrydb/quarry/materialize"
)

// DefaultMaxMessageBytes is Config.MaxMessageBytes when it is 0: the
// largest JSON-RPC message Quarry sends, under the 10 MiB at which the
// official TypeScript SDK's stdio client drops the connection.
const DefaultMaxMessageBytes = 8 << 20

// messageOverhead is what a message adds around its payload (envelope,
// column list, warnings): budgets are computed without it.
const messageOverhead = 64 << 10

// resourceReadLimit is the largest artifact one resources/read returns for
// a message cap of max bytes: base64 makes 4 bytes of every 3.
func resourceReadLimit(maxMessage int64) int64 { return max(maxMessage-messageOverhead, 1<<10) / 4 * 3 }

// checkMessage refuses a tool result whose rows would make a message over
// the cap: a tool result carries its JSON twice (structured content and
// text), and JSON escaping may grow strings.
func (s *Service) checkMessage(res *materialize.Result) error {
	size := 2 * int64(len(res.Data)+len(res.Preview))
	if limit := s.cfg.MaxMessageBytes - messageOverhead; size > limit {
		return qerr.Limit(qerr.CodeOversizeResult, "this page is %d bytes of JSON, too big for one message of at most %d bytes", size/2, s.cfg.MaxMessageBytes).
			WithHint("continue with page_info.page_token (its pages respect the inline byte cap), or select fewer columns")
	}
	return nil
}
