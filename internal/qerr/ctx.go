package qerr

import "context"

func errDeadline() error { return context.DeadlineExceeded }
func errCanceled() error { return context.Canceled }
