//go:build unix

package listener

import (
	"os"
	"syscall"
)

func fileID(fi os.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino //nolint:unconvert // Dev is int32 on some systems
	}
	return 0, 0
}
