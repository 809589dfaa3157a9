package qerr

// Codes of remote sources (Arrow Flight SQL remotes, catalog/flightsrc).
const (
	// CodeRemoteUnavailable: the remote cannot be reached (ErrNotFound).
	CodeRemoteUnavailable = "remote_unavailable"
	// CodeRemoteAuthFailed: the remote refused the configured credentials (ErrPermission).
	CodeRemoteAuthFailed = "remote_auth_failed"
	// CodeRemoteError: the remote failed the statement Quarry generated (ErrUnsupported).
	CodeRemoteError = "remote_error"
	// CodeRemoteSchemaChanged: a remote table's columns changed since the
	// catalog listed it (ErrNotFound).
	CodeRemoteSchemaChanged = "remote_schema_changed"
)
