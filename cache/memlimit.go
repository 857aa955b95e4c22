package cache

// MemoryLimitFor is the Go runtime's soft memory limit
// (runtime/debug.SetMemoryLimit) that suits a process whose in-process
// cache may hold l1MaxBytes, split in tiers by l1HotBytes (Options,
// L1Tiers): the hot tier, an eighth more for what the allocator rounds and
// per-entry bookkeeping the byte count only estimates, a thirty-second of
// the bulk tier for its index and admission log (pointer-free, on the Go
// heap: about 20 MiB for 1 GiB of 9 KB pages; the entries themselves are
// off-heap and not counted by the runtime), and 160 MiB for everything else (buffers, connections, the key
// index, garbage between collections).
//
// Why a limit at all: the hot tier's bodies are live heap, and with the
// runtime's default (GOGC=100, no limit) a heap of 1 GiB live is allowed to
// grow to 2 GiB before the next collection, so RSS would be twice the
// configured cache. Under the limit the collector runs when the process
// nears it instead. Bodies hold no pointers, so a collection marks only the
// small per-entry records, not the cached bytes: its cost grows with the
// number of hot entries, which is why a large L1 keeps most of its entries
// in the bulk tier, which the collector does not see (BenchmarkLargeL1
// measures the share of CPU it takes with L1 at 1 GiB).
//
// With a bulk tier the frequency sketch, sized for the whole L1 (one byte
// per 64 bytes of it, rounded up to a power of two: SketchBytes), is
// counted apart: it alone could fill the bulk tier's thirty-second (16 MiB
// of sketch for 560 MiB of L1). With one tier the eighth covers it.
func MemoryLimitFor(l1MaxBytes, l1HotBytes int64) int64 {
	if l1MaxBytes < 0 {
		l1MaxBytes = 0
	}
	hot, bulk := L1Tiers(l1MaxBytes, l1HotBytes)
	lim := hot + hot/8 + bulk/32 + 160<<20
	if bulk > 0 {
		lim += SketchBytes(l1MaxBytes)
	}
	return lim
}

// SketchBytes is the heap the admission policy's frequency sketch takes for
// an L1 of l1MaxBytes (newSketch(l1MaxBytes/256): one 8-bit counter per 64
// bytes, rounded up to a power of two, at least 4,096).
func SketchBytes(l1MaxBytes int64) int64 {
	return int64(sketchWidth(max(l1MaxBytes, 0) / 256))
}
