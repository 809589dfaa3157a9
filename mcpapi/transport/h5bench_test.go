package transport_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/quarrydb/quarry/internal/app"
	"github.com/quarrydb/quarry/mcpapi/transport"
)

// BenchmarkReadDatasetSliceMCP times the whole MCP round trip of
// read_dataset_slice (JSON-RPC request, argument binding, slice parsing,
// the HDF5 read, nested-list JSON encoding, JSON-RPC response) over
// mcp-go's in-process client, for the harness's H1 and H2 slices of the
// file named by QUARRY_BENCH_H5. Caps are raised so the slices come back
// inline as nested lists, as h5py's json.dumps(arr.tolist()) does.
func BenchmarkReadDatasetSliceMCP(b *testing.B) {
	src := os.Getenv("QUARRY_BENCH_H5")
	if src == "" {
		b.Skip("set QUARRY_BENCH_H5 to the peer harness's sales.h5")
	}
	root := b.TempDir()
	if err := os.Link(src, filepath.Join(root, "sales.h5")); err != nil {
		b.Skipf("cannot hard-link %s into the data root: %v", src, err)
	}
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{Data: root, ArtifactDir: b.TempDir(), MaxRows: 1 << 20, MaxCells: 1 << 20, MaxBytes: 64 << 20,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	c, err := client.NewInProcessClient(a.MCP)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	for _, q := range []struct{ name, uri, slice string }{
		{"H1", "h5://sales.h5?path=/sales/price", "1000000:1010000"},
		{"H2", "h5://sales.h5?path=/grid", "1000:1512, 2000:2512"},
	} {
		args, _ := json.Marshal(map[string]any{"uri": q.uri, "slice_str": q.slice})
		msg := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"read_dataset_slice","arguments":` + string(args) + `}}`)
		// server: what the stdio transport does per request: parse the
		// JSON-RPC message, run the tool, serialize the response.
		b.Run(q.name+"/server", func(b *testing.B) {
			first, err := transport.AppendMessage(nil, a.MCP.HandleMessage(ctx, msg))
			if err != nil || !bytes.Contains(first, []byte(`"method":"direct"`)) {
				b.Fatalf("slice not inline: %v %.300s", err, first)
			}
			b.SetBytes(int64(len(first)))
			var buf []byte
			for b.Loop() {
				if buf, err = transport.AppendMessage(buf[:0], a.MCP.HandleMessage(ctx, msg)); err != nil {
					b.Fatal(err)
				}
			}
		})
		// marshal: the same with json.Marshal, as mcp-go's own transports
		// (and Quarry's HTTP transport) serialize responses.
		b.Run(q.name+"/marshal", func(b *testing.B) {
			for b.Loop() {
				if _, err := json.Marshal(a.MCP.HandleMessage(ctx, msg)); err != nil {
					b.Fatal(err)
				}
			}
		})
		// stdio: the request written to and the response line read back
		// from ServeStdio over pipes.
		b.Run(q.name+"/stdio", func(b *testing.B) {
			benchStdio(b, a, msg)
		})
		// client: the same call from mcp-go's in-process client, including
		// the client decoding the result.
		b.Run(q.name+"/client", func(b *testing.B) {
			req := mcp.CallToolRequest{}
			req.Params.Name = "read_dataset_slice"
			req.Params.Arguments = map[string]any{"uri": q.uri, "slice_str": q.slice}
			for b.Loop() {
				res, err := c.CallTool(ctx, req)
				if err != nil || res.IsError {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}

// benchStdio times request/response pairs through transport.ServeStdio.
func benchStdio(b *testing.B, a *app.App, msg []byte) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- transport.ServeStdio(context.Background(), a.MCP, inR, outW, slog.New(slog.NewTextHandler(io.Discard, nil)))
		outW.Close()
	}()
	br := bufio.NewReaderSize(outR, 1<<20)
	roundTrip := func(line []byte) []byte {
		if _, err := inW.Write(line); err != nil {
			b.Fatal(err)
		}
		resp, err := br.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	roundTrip([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"b","version":"1"}}}` + "\n"))
	if _, err := inW.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		b.Fatal(err)
	}
	line := append(slices.Clone(msg), '\n')
	if first := roundTrip(line); !bytes.Contains(first, []byte(`"method":"direct"`)) {
		b.Fatalf("slice not inline: %.300s", first)
	}
	for b.Loop() {
		roundTrip(line)
	}
	inW.Close()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
