package qerr

// Codes of the export tool.
const (
	// CodeExportDisabled: the server has no export directory (serve --export-dir).
	CodeExportDisabled = "export_disabled"
	// CodeFileExists: the export target exists and overwrite was not set.
	CodeFileExists = "file_exists"
)
