package app

// HandlesLive is the number of live result handles.
func (a *App) HandlesLive() int { return a.handles.Len() }
