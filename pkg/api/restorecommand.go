package api

import "strings"

// RestoreCommand is the command line that restores a job from a savepoint
// or retained checkpoint at path: `flinkgo run -s PATH FILE` with the
// job's own spec file (as the CLI submitted it: absolute), or JOB.yaml when
// the file is not known. Words a shell would split are quoted, so the line
// can be pasted as it is.
func RestoreCommand(path, file string) string {
	if file == "" {
		file = "JOB.yaml"
	}
	return "flinkgo run -s " + shellWord(path) + " " + shellWord(file)
}

// shellWord quotes s for a POSIX shell unless it is made of characters no
// shell treats specially.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@%+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
