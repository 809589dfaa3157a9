// Package elicit is a scripted elicitation handler for mcp-go clients in
// tests of the confirmation of big queries. Only tests import it.
package elicit

import (
	"context"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// Answerer answers every form elicitation with the action and choice Next
// set (accepting with {"choice": choice}) and records what it was asked.
// It is safe for concurrent use; the zero value declines nothing: it
// answers with an empty action until Next is called.
type Answerer struct {
	mu     sync.Mutex
	action mcp.ElicitationResponseAction
	choice string
	asked  []mcp.ElicitationRequest
}

// Elicit is the client's elicitation handler.
func (a *Answerer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, req)
	res := &mcp.ElicitationResult{}
	res.Action = a.action
	if a.action == mcp.ElicitationResponseActionAccept {
		res.Content = map[string]any{"choice": a.choice}
	}
	return res, nil
}

// Next sets the answer to the following elicitations and forgets those
// asked so far.
func (a *Answerer) Next(action mcp.ElicitationResponseAction, choice string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.action, a.choice, a.asked = action, choice, nil
}

// Asked returns the elicitations asked since Next.
func (a *Answerer) Asked() []mcp.ElicitationRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]mcp.ElicitationRequest(nil), a.asked...)
}
