package main

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/quarrydb/quarry/internal/qerr"
)

// toolSelection is serve's --tools: which of the server's tools are
// offered. The names are the server's own, so a new tool is selectable
// without another list.
type toolSelection struct{ spec string }

func (s *toolSelection) register(fs *flag.FlagSet) {
	fs.StringVar(&s.spec, "tools", "all", "tools offered, comma-separated: tool names, 'all' for every tool, -name to leave one out "+
		"(e.g. all,-advanced_query or get_catalog,get_schema,query_data)")
}

// apply removes from srv the tools the selection leaves out. An unknown
// name fails with the closest names and the list of tools; so does a
// selection that leaves no tool.
func (s *toolSelection) apply(srv *server.MCPServer) error {
	var all []string
	for name := range srv.ListTools() {
		all = append(all, name)
	}
	sort.Strings(all)
	keep := map[string]bool{}
	for i, entry := range strings.Split(s.spec, ",") {
		entry = strings.TrimSpace(entry)
		name, drop := strings.CutPrefix(entry, "-")
		if i == 0 && drop {
			for _, n := range all {
				keep[n] = true
			}
		}
		switch {
		case entry == "":
			continue
		case name == "all":
			for _, n := range all {
				keep[n] = !drop
			}
			continue
		case srv.GetTool(name) == nil:
			msg := fmt.Sprintf("--tools: unknown tool %q", name)
			if sug := qerr.Suggest(name, all, 3); len(sug) > 0 {
				msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(sug, ", "))
			}
			return fmt.Errorf("%s; the tools are: all, %s", msg, strings.Join(all, ", "))
		}
		keep[name] = !drop
	}
	var gone []string
	for _, n := range all {
		if !keep[n] {
			gone = append(gone, n)
		}
	}
	if len(gone) == len(all) {
		return fmt.Errorf("--tools %q leaves no tool to offer; the tools are: %s", s.spec, strings.Join(all, ", "))
	}
	srv.DeleteTools(gone...)
	return nil
}
