package qerr

// Codes of the export tool.
const (
	// CodeExportDisabled: the server has no export directory (serve --export-dir).
	CodeExportDisabled = "export_disabled"
	// CodeFileExists: the export target exists and overwrite was not set.
	CodeFileExists = "file_exists"
	// CodeDownloadDenied: an HTTP download URL whose signature does not verify.
	CodeDownloadDenied = "download_denied"
	// CodeDownloadExpired: an HTTP download URL past its expiry.
	CodeDownloadExpired = "download_expired"
)
