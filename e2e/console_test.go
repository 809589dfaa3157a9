package e2e

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/png"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/chromedp/cdproto/browser"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

var updateScreens = flag.Bool("update-screens", false, "write the console screenshots of TestConsoleBrowser to docs/console/")

// chromiumPath is Debian's chromium (apt package chromium), which the
// console tests drive headless.
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("the console browser test needs Debian's chromium on PATH (apt-get install chromium; make test installs it as root)")
	return ""
}

// consoleRoot is a data folder with hostile names and values: markup in a
// file name, a column name and cells, quotes, an RTL override, a 10 KB
// string; and a 500-row dataset for paging.
func consoleRoot(t *testing.T) string {
	root := t.TempDir()
	long := strings.Repeat("x", 10_000)
	hostile := "id,\"<script>alert('col')</script>\",note\n" +
		"1,\"<img src=x onerror=alert(1)>\",\"he said \"\"hi\"\"\"\n" +
		"2,\"\u202eevil\u202c <b>bold</b>\"," + long + "\n"
	writeData(t, root, "x<img src=y onerror=alert(2)>.csv", hostile)
	var sb strings.Builder
	sb.WriteString("id,city,temp\n")
	cities := []string{"Yerevan", "Gyumri", "Vanadzor", "Dilijan"}
	for i := 1; i <= 500; i++ {
		fmt.Fprintf(&sb, "%d,%s,%d.5\n", i, cities[i%len(cities)], i%40)
	}
	writeData(t, root, "weather/readings.csv", sb.String())
	return root
}

func writeData(t *testing.T, root, name, text string) {
	t.Helper()
	p := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// startConsoleServer runs `quarry serve --transport http` with a bearer
// token and returns its base URL.
func startConsoleServer(t *testing.T, root, token string) string {
	t.Helper()
	return launchHTTP(t, []string{"QUARRY_AUTH_TOKENS=" + token}, "--data", root).base
}

// browserProblems collects console errors, uncaught exceptions, CSP
// violations (browser log errors) and JavaScript dialogs (an alert means
// injected markup ran).
type browserProblems struct {
	mu   sync.Mutex
	list []string
}

func (p *browserProblems) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, s)
}

func (p *browserProblems) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.list
	p.list = nil
	return out
}

// newBrowser starts headless chromium with downloads going to dir.
func newBrowser(t *testing.T, dir string, problems *browserProblems) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath(t)),
		chromedp.NoSandbox, // CI runs as root
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.WindowSize(1280, 800),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	messages := chromedp.Console(ctx)
	dialogs := chromedp.Events(ctx, cdppage.JavascriptDialogOpening)
	if _, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	for _, name := range []string{"clipboard-read", "clipboard-write"} {
		if _, err := chromedp.CallBrowser(ctx, browser.SetPermission, browser.SetPermissionParams{
			Permission: &browser.PermissionDescriptor{Name: name}, Setting: browser.PermissionSettingGranted}); err != nil {
			t.Fatalf("granting %s: %v", name, err)
		}
	}
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.Type == chromedp.ConsoleException {
				problems.add(m.String())
			}
		}
	}()
	go func() {
		for d, err := range dialogs {
			if err != nil {
				return
			}
			problems.add("dialog opened (injected script ran?): " + d.Message)
			_, _ = chromedp.Call(ctx, cdppage.HandleJavaScriptDialog, cdppage.HandleJavaScriptDialogParams{Accept: false})
		}
	}()
	return ctx
}

// screenshot saves a full-page screenshot as name.png under dir, checks it
// is not blank, and copies it to docs/console with -update-screens.
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	img, err := png.Decode(bytes.NewReader(buf))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if distinct := distinctColours(img, 50); distinct < 8 {
		t.Fatalf("screenshot %s looks blank: %d distinct colours", name, distinct)
	}
	if err := os.WriteFile(filepath.Join(dir, name+".png"), buf, 0o644); err != nil {
		t.Fatal(err)
	}
	if *updateScreens {
		docs := filepath.Join("..", "docs", "console")
		if err := os.MkdirAll(docs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(docs, name+".png"), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// distinctColours counts the distinct colours of img (up to limit).
func distinctColours(img image.Image, limit int) int {
	seen := map[[4]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, a := img.At(x, y).RGBA()
			seen[[4]uint32{r >> 8, g >> 8, bl >> 8, a >> 8}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}

// waitText waits until the element sel's text contains want.
func waitText(sel, want string) chromedp.Action[chromedp.Void] {
	return pollTrue(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.textContent.includes(%q); })()`, sel, want))
}

// waitPage waits until the console rendered the page (body[data-page]).
func waitPage(name string) chromedp.Action[chromedp.Void] {
	return pollTrue(fmt.Sprintf(`document.body.dataset.page === %q && !!document.body.dataset.ready`, name))
}

func pollTrue(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Poll[bool](expr, chromedp.WithPollingTimeout(30*time.Second))(ctx, t)
		return err
	})
}

// waitVisible waits until an element matching sel exists and has a box.
func waitVisible(sel string) chromedp.Action[chromedp.Void] {
	return pollTrue(fmt.Sprintf(`(() => { const e = document.querySelector(%q); return !!e && e.getClientRects().length > 0; })()`, sel))
}

// goHash moves the console to another page (a hash change: a navigation
// within the document, which fires no load event).
func goHash(hash string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`delete document.body.dataset.ready; location.hash = %q`, hash))(ctx, t)
		return err
	})
}

// evaluate runs expr in the page and returns its value.
func evaluate[T any](t *testing.T, ctx context.Context, expr string, opts ...chromedp.EvaluateOption) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, opts...))
	if err != nil {
		t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// TestConsoleBrowser drives the console in headless chromium: the home
// page with a copied client config, the token, the catalog with hostile
// names rendered as text, a dataset page, a query paged through its
// handle, a Parquet download read back, a tool called from its form, an
// error with its hint, the prompts and resources pages, dark theme and a
// phone-sized viewport; each page's screenshot must not be blank, and any
// console error, CSP violation or dialog fails the test.
func TestConsoleBrowser(t *testing.T) {
	const token = "console-test-token-0123456789abcdef"
	base := startConsoleServer(t, consoleRoot(t), token)
	shots, downloads := t.TempDir(), t.TempDir()
	if d := os.Getenv("QUARRY_TEST_OUTPUT"); d != "" {
		shots = filepath.Join(d, "console")
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	problems := &browserProblems{}
	ctx := newBrowser(t, downloads, problems)
	ctx, cancel := context.WithTimeout(ctx, 4*time.Minute)
	defer cancel()
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		start := time.Now()
		defer func() { t.Logf("step %s: %v", step, time.Since(start).Round(time.Millisecond)) }()
		if err := chromedp.Do(ctx, actions...); err != nil {
			errText, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[string](`document.getElementById("error").textContent + " | " + document.getElementById("status").textContent + " | " + location.hash + " | " + document.getElementById("main").innerText.slice(0, 300)`))
			t.Fatalf("%s: %v (page says: %s; browser problems: %v)", step, err, errText, problems.take())
		}
		var bad []string
		for _, p := range problems.take() {
			// Before the token is typed, /mcp answers 401 (the page then
			// asks for the token); the browser logs that response.
			if step == "home" && strings.Contains(p, "status of 401") {
				continue
			}
			bad = append(bad, p)
		}
		if len(bad) > 0 {
			t.Fatalf("%s: browser problems: %v", step, bad)
		}
	}

	// Home, before the token: the health line says a token is needed.
	run("home", chromedp.Navigate(base+"/"), waitPage("home"), waitText("#health", "token required"))
	// Room for every request of the session in the resource timing buffer
	// (the config fetch is counted after the tools page).
	evaluate[bool](t, ctx, `(performance.setResourceTimingBufferSize(100000), true)`)
	// Keyboard: the skip link is the first focusable element.
	run("keyboard", chromedp.KeyEvent("\t"))
	focused := evaluate[string](t, ctx, `document.activeElement.className`)
	if focused != "skip" {
		t.Errorf("first Tab focuses %q, want the skip link", focused)
	}
	run("token", chromedp.SendKeys(chromedp.CSS("#token"), token), chromedp.Click(chromedp.CSS(`#auth button[type="submit"]`)), waitText("#health", "2 datasets"))
	screenshot(t, ctx, shots, "home")
	run("copy config", chromedp.Click(chromedp.CSS("section.client button.copy")), waitText("#status", "configuration"))
	copied := evaluate[string](t, ctx, `navigator.clipboard.readText()`, chromedp.EvalAwaitPromise)
	if !strings.Contains(copied, `"mcpServers"`) || !strings.Contains(copied, "--data") {
		t.Errorf("copied config: %q", copied)
	}

	// Catalog: the hostile file name is text, no element was injected.
	run("catalog", goHash("#/catalog"), waitPage("catalog"), waitText("#catalog-list", "weather/readings"))
	const injectedJS = `document.querySelectorAll("main img, main script, main b").length`
	injected := evaluate[int](t, ctx, injectedJS)
	if injected != 0 {
		t.Errorf("markup from data was rendered as HTML (%d elements)", injected)
	}
	run("hostile id as text", waitText("#catalog-list", "x<img src=y onerror=alert(2)>"))
	screenshot(t, ctx, shots, "catalog")

	// Dataset page of the hostile dataset: column name and cells as text.
	run("dataset", chromedp.Click(chromedp.CSS(`#catalog-list a[href*="x%3Cimg"]`)), waitPage("dataset"), waitText("main", "<script>alert('col')</script>"))
	injected = evaluate[int](t, ctx, injectedJS)
	if injected != 0 {
		t.Errorf("dataset page rendered data as HTML (%d elements)", injected)
	}
	screenshot(t, ctx, shots, "dataset")

	// Query: 500 rows come back through a handle; page once.
	run("query page", goHash(`#/query?dataset=weather%2Freadings&spec=%7B%22columns%22%3A%5B%22id%22%2C%22city%22%2C%22temp%22%5D%7D`),
		waitPage("query"), waitVisible("#run"))
	if n := evaluate[int](t, ctx, `document.querySelectorAll("#columns button").length`); n != 3 {
		t.Errorf("the query page shows %d column buttons, want 3", n)
	}
	run("run", chromedp.Click(chromedp.CSS("#run")), waitVisible("#next-page"), waitText("#result-info", "500 in all"))
	screenshot(t, ctx, shots, "query")
	run("next page", chromedp.Click(chromedp.CSS("#next-page")), waitText("#result-info", "rows 201–400 of 500"))

	// Download the result as Parquet and read it back.
	run("download parquet", chromedp.Click(chromedp.CSS("#download-parquet")), waitText("#status", "Writing PARQUET: done"))
	rows := waitParquet(t, downloads)
	if rows != 500 {
		t.Errorf("downloaded Parquet has %d rows, want 500", rows)
	}

	// A chart of the result when the server has the plot tool.
	if evaluate[bool](t, ctx, `!!document.getElementById("draw")`) {
		run("draw", chromedp.SetValue(chromedp.CSS("#chart-kind"), "bar"), chromedp.SetValue(chromedp.CSS("#chart-x"), "city"),
			chromedp.SetValue(chromedp.CSS("#chart-y"), "temp"), chromedp.Click(chromedp.CSS("#draw")), waitVisible("#chart img.chart"))
		screenshot(t, ctx, shots, "chart")
	}

	// An error with its hint: an unknown column.
	run("error", goHash(`#/query?dataset=weather%2Freadings&spec=%7B%22columns%22%3A%5B%22tempp%22%5D%7D`), waitPage("query"),
		waitVisible("#run"), chromedp.Click(chromedp.CSS("#run")), waitVisible("#error"),
		waitText("#error", "invalid_column"), waitText("#error .hint", "temp"))
	screenshot(t, ctx, shots, "error")

	// Tools: call get_schema from its form.
	run("tools", goHash("#/tools"), waitPage("tools"), waitVisible("#tool-get_schema"))
	screenshot(t, ctx, shots, "tools")
	if n := evaluate[int](t, ctx, `document.querySelectorAll("section.tool details.output-schema").length`); n < 10 {
		t.Errorf("the tools page shows %d output schemas", n)
	}
	// The home and tools pages share one fetch of the console configuration.
	if n := evaluate[int](t, ctx, `performance.getEntriesByType("resource").filter((e) => e.name.endsWith("/console/config.json")).length`); n != 1 {
		t.Errorf("/console/config.json fetched %d times in one page load, want 1", n)
	}
	run("try get_schema",
		chromedp.Click(chromedp.CSS("#tool-get_schema details.try summary")),
		chromedp.SetValue(chromedp.CSS("#get_schema-args"), `{"dataset": "weather/readings"}`),
		chromedp.Click(chromedp.CSS("#get_schema-call")), waitText("#get_schema-out", `"temp"`))

	// Resources and prompts.
	run("resources", goHash("#/resources"), waitPage("resources"), waitText("main", "Templates"))
	screenshot(t, ctx, shots, "resources")
	run("prompts", goHash("#/prompts"), waitPage("prompts"), waitVisible("main section.card"))
	screenshot(t, ctx, shots, "prompts")

	// Dark theme, and a phone-sized viewport.
	run("dark", goHash("#/catalog"), waitPage("catalog"), waitText("#catalog-list", "weather/readings"), chromedp.Click(chromedp.CSS("#theme")))
	screenshot(t, ctx, shots, "catalog-dark")
	run("phone", chromedp.EmulateViewport(390, 844), goHash("#/query?dataset=weather%2Freadings"), waitPage("query"),
		waitVisible("#run"))
	screenshot(t, ctx, shots, "query-phone")

	t.Logf("screenshots in %s", shots)
}

// waitParquet waits for a .parquet download in dir and returns its rows.
func waitParquet(t *testing.T, dir string) int64 {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasSuffix(e.Name(), ".crdownload") {
				continue
			}
			p := filepath.Join(dir, e.Name())
			r, err := file.OpenParquetFile(p, false, file.WithReadProps(nil))
			if err != nil {
				continue // a GUID-named download: wait for it to be complete
			}
			n := r.NumRows()
			_ = r.Close()
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatal("no Parquet download arrived")
	return 0
}

// TestConsoleOff: with the console on (the default) a browser's GET /mcp
// gets the instruction page under the console's CSP and / the console;
// with --console=false both are gone and /mcp is MCP only.
func TestConsoleOff(t *testing.T) {
	get := func(url, accept string) (int, string, http.Header) {
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		req.Header.Set("Accept", accept)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body), resp.Header
	}
	_, on := startHTTP(t, "--console")
	code, body, h := get(on+"/mcp", "text/html,application/xhtml+xml")
	if code != 200 || !strings.Contains(body, "Quarry MCP endpoint") || !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") {
		t.Errorf("instruction page: %d %q %v", code, body, h)
	}
	if code, body, _ := get(on+"/", "text/html"); code != 200 || !strings.Contains(body, `src="/console/app.js"`) {
		t.Errorf("console home: %d %q", code, body)
	}
	_, off := startHTTP(t, "--console=false")
	if code, _, _ := get(off+"/", "text/html"); code != http.StatusNotFound {
		t.Errorf("--console=false: / answered %d", code)
	}
	// Without the console, GET /mcp is MCP's listening stream (or a refusal),
	// never an HTML page; the stream is not read.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, off+"/mcp", nil)
	req.Header.Set("Accept", "text/html")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/html") {
		t.Errorf("--console=false: GET /mcp answered %d %s", resp.StatusCode, ct)
	}
}
