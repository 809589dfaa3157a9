package catalog_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/quarrydb/quarry/catalog"
	"github.com/quarrydb/quarry/catalog/csv"
)

func ExampleNew() {
	root, err := os.MkdirTemp("", "quarry-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(root)
	_ = os.MkdirAll(filepath.Join(root, "weather"), 0o755)
	_ = os.WriteFile(filepath.Join(root, "weather", "stations.csv"),
		[]byte("station_id,name,elevation_m,opened\nAM01,Երևան,990,1890-01-01\nAM02,Գյումրի,,1891-06-15\n"), 0o644)
	_ = os.WriteFile(filepath.Join(root, "notes.txt"), []byte("not data"), 0o644)

	c, err := catalog.New(context.Background(), catalog.Options{Formats: []catalog.Format{csv.NewFormat()},
		Root:   root,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	for _, ds := range c.Datasets() {
		fmt.Printf("%s (%s, %d rows)\n", ds.ID, ds.Path, ds.RowCount)
		for _, f := range ds.Schema.Fields() {
			fmt.Printf("  %s: %s\n", f.Name, f.Type)
		}
	}
	// Output:
	// weather/stations (weather/stations.csv, 2 rows)
	//   station_id: utf8
	//   name: utf8
	//   elevation_m: int64
	//   opened: date32
}
