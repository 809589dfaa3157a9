package handles_test

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/quarrydb/quarry/handles"
	"github.com/quarrydb/quarry/internal/qerr"
)

// result is a toy reference-counted value standing in for an Arrow table.
type result struct {
	rows []string
	refs atomic.Int64
}

func (r *result) Retain() { r.refs.Add(1) }
func (r *result) Release() {
	if r.refs.Add(-1) == 0 {
		fmt.Println("result freed")
	}
}

func Example() {
	reg := handles.New[*result](handles.Options{})
	defer reg.Close()

	res := &result{rows: []string{"a", "b", "c", "d", "e"}}
	res.refs.Store(1)
	id := reg.Put(res, "alice") // the registry now owns our reference

	// First page, and a token for the next one.
	page := reg.Sign(handles.Token{Handle: id, Offset: 2, Size: 2, Format: "json"})

	// Later call: verify the token, then fetch the handle.
	tok, err := reg.Verify(page, id)
	if err != nil {
		panic(err)
	}
	v, err := reg.Get(tok.Handle, "alice")
	if err != nil {
		panic(err)
	}
	fmt.Println(v.rows[tok.Offset : tok.Offset+tok.Size])
	v.Release()

	// Another principal cannot see the handle.
	_, err = reg.Get(id, "bob")
	fmt.Println(errors.Is(err, qerr.ErrExpired), qerr.Code(err))

	reg.Delete(id)
	// Output:
	// [c d]
	// true handle_expired
	// result freed
}
