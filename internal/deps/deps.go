// Package deps pins the module's chosen dependencies while the packages
// that use them are being written. It is removed once every one is imported.
package deps

import (
	_ "github.com/apache/arrow-go/v18/arrow/array"
	_ "github.com/apache/arrow-go/v18/arrow/compute"
	_ "github.com/apache/arrow-go/v18/arrow/csv"
	_ "github.com/apache/arrow-go/v18/arrow/ipc"
	_ "github.com/hashicorp/golang-lru/v2/expirable"
	_ "github.com/mark3labs/mcp-go/client"
	_ "github.com/mark3labs/mcp-go/server"
	_ "github.com/parquet-go/parquet-go"
	_ "golang.org/x/time/rate"
	_ "gonum.org/v1/hdf5"
)
