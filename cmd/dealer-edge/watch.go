package main

import (
	"crypto/sha256"
	"io"
	"os"
	"time"
)

// fileWatch polls a set of files and calls onChange when their contents
// change. A Kubernetes ConfigMap or Secret volume changes by swapping a
// symbolic link (config.json -> ..data/config.json, ..data ->
// ..2026_11_23_21_40_00.123/): the path keeps its name, what it resolves
// to changes. Reading the path through its links at every tick sees that,
// and every other way a file is replaced (an editor's rename, a systemd
// credential, a bind mount, NFS), without inotify's blind spots (a watch
// on a file follows the old inode; a watch on a directory misses a link
// swapped two levels up). The cost is reading a few small files every
// watch_interval.
type fileWatch struct {
	interval time.Duration
	files    func() []string // re-read at every tick: a reload may name other files
	onChange func()
	stop     chan struct{}
	done     chan struct{}
}

// maxWatchedBytes bounds what one tick reads of one file.
const maxWatchedBytes = 4 << 20

// fingerprint hashes the contents of paths, in order, through their
// symbolic links. A file that cannot be read counts as its error kind, so
// a file appearing or vanishing is a change too.
func fingerprint(paths []string) [32]byte {
	h := sha256.New()
	for _, p := range paths {
		io.WriteString(h, p)
		h.Write([]byte{0})
		f, err := os.Open(p)
		if err != nil {
			io.WriteString(h, "unreadable")
			h.Write([]byte{0})
			continue
		}
		fh := sha256.New()
		_, err = io.Copy(fh, io.LimitReader(f, maxWatchedBytes))
		f.Close()
		if err != nil {
			io.WriteString(h, "unreadable")
		}
		h.Write(fh.Sum(nil))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// startWatch begins polling; the first fingerprint is taken now, so only
// later changes count.
func startWatch(interval time.Duration, files func() []string, onChange func()) *fileWatch {
	w := &fileWatch{interval: interval, files: files, onChange: onChange, stop: make(chan struct{}), done: make(chan struct{})}
	last := fingerprint(files())
	go func() {
		defer close(w.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
			}
			// Taken before the reload: a change during the reload is seen
			// at the next tick.
			if fp := fingerprint(w.files()); fp != last {
				last = fp
				w.onChange()
			}
		}
	}()
	return w
}

// close stops the watch and waits for a reload it started.
func (w *fileWatch) close() {
	close(w.stop)
	<-w.done
}
