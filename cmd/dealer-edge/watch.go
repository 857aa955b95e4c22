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
	// read returns the fingerprints the last reload took of the files it
	// named, before it read them (nil before any): the state a file new
	// to files counts its changes from.
	read     func() map[string][32]byte
	onChange func()
	stop     chan struct{}
	done     chan struct{}
}

// maxWatchedBytes bounds what one tick reads of one file.
const maxWatchedBytes = 4 << 20

// fingerprints hashes the contents of each of paths through its symbolic
// links. A file that cannot be read counts as "unreadable", so a file
// appearing or vanishing is a change too.
func fingerprints(paths []string) map[string][32]byte {
	out := make(map[string][32]byte, len(paths))
	for _, p := range paths {
		var sum [32]byte
		f, err := os.Open(p)
		if err == nil {
			fh := sha256.New()
			_, err = io.Copy(fh, io.LimitReader(f, maxWatchedBytes))
			f.Close()
			fh.Sum(sum[:0])
		}
		if err != nil {
			sum = sha256.Sum256([]byte("unreadable"))
		}
		out[p] = sum
	}
	return out
}

// changed reports whether a file of now differs from its state in last
// or, for a file new to the list, from its state when the reload that
// named it read it (read). A file new to the list that no reload read is
// not a change: its state now is where its changes count from.
func changed(last, read, now map[string][32]byte) bool {
	for p, h := range now {
		old, ok := last[p]
		if !ok {
			old, ok = read[p]
		}
		if ok && old != h {
			return true
		}
	}
	return false
}

// startWatch begins polling. A file of loaded (the fingerprints taken
// before the config in force was read at start; it may be nil) counts its
// changes from that state, so a change between that read and now reloads
// at the first tick; any other file from its state now. read returns what
// the last reload read (see fileWatch.read); it may be nil.
func startWatch(interval time.Duration, files func() []string, read func() map[string][32]byte, loaded map[string][32]byte, onChange func()) *fileWatch {
	if read == nil {
		read = func() map[string][32]byte { return nil }
	}
	w := &fileWatch{interval: interval, files: files, read: read, onChange: onChange, stop: make(chan struct{}), done: make(chan struct{})}
	last := fingerprints(files())
	for p := range last {
		if h, ok := loaded[p]; ok {
			last[p] = h
		}
	}
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
			now := fingerprints(w.files())
			if !changed(last, w.read(), now) {
				last = now
				continue
			}
			last = now
			w.onChange()
			// A file the reload named for the first time (a new *_file,
			// of a rejected config too: one that is not there yet) counts
			// from its state when the reload read it, so its arrival is a
			// change and reloads, also when it arrived during the reload
			// (its state right after the reload would already be the
			// arrived file's: that reload was never retried).
			read := w.read()
			for p, h := range fingerprints(w.files()) {
				if _, ok := last[p]; !ok {
					if r, ok := read[p]; ok {
						h = r
					}
					last[p] = h
				}
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
