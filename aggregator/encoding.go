package aggregator

import "bytes"

// acceptsGzip reports whether an Accept-Encoding field value (RFC 9110
// 12.5.3) accepts the gzip content coding: "gzip" or its alias "x-gzip"
// with a non-zero weight, or else "*" with a non-zero weight. Codings are
// case-insensitive; an explicit gzip entry wins over "*"; an entry whose
// weight cannot be parsed counts as refused. An empty or absent field
// accepts nothing but identity here: the edge compresses only on request.
// It does not allocate.
func acceptsGzip(v []byte) bool {
	star := false
	for len(v) > 0 {
		var item []byte
		item, v = nextItem(v, ',')
		coding, params := nextItem(item, ';')
		coding = bytes.TrimSpace(coding)
		switch {
		case bytes.EqualFold(coding, []byte("gzip")), bytes.EqualFold(coding, []byte("x-gzip")):
			return weightNonZero(params)
		case len(coding) == 1 && coding[0] == '*':
			star = weightNonZero(params)
		}
	}
	return star
}

// weightNonZero reads the parameters of one Accept-Encoding entry
// ("q=0.5", " q=1 ") and reports whether its weight is above zero. No q
// parameter means 1; a malformed weight counts as zero. White space around
// the "=" ("q = 0") is outside the grammar (RFC 9110 12.4.2) but is read as
// the weight the client meant: skipped as no weight, it would mean q=1 and
// send gzip to a client that refused it.
func weightNonZero(params []byte) bool {
	for len(params) > 0 {
		var p []byte
		p, params = nextItem(params, ';')
		name, value := nextItem(p, '=')
		if value == nil {
			continue
		}
		if name = bytes.TrimSpace(name); len(name) != 1 || (name[0] != 'q' && name[0] != 'Q') {
			continue
		}
		return qvalueNonZero(bytes.TrimSpace(value))
	}
	return true
}

// qvalueNonZero parses a weight (RFC 9110 12.4.2: "0" to "1" with at most
// three decimals) and reports whether it is above zero.
func qvalueNonZero(q []byte) bool {
	if len(q) == 0 || len(q) > 5 || (q[0] != '0' && q[0] != '1') {
		return false
	}
	if len(q) > 1 {
		if q[1] != '.' {
			return false
		}
		for _, c := range q[2:] {
			if c < '0' || c > '9' || (q[0] == '1' && c != '0') {
				return false
			}
		}
	}
	if q[0] == '1' {
		return true
	}
	for _, c := range q[1:] {
		if c >= '1' && c <= '9' {
			return true
		}
	}
	return false
}

// nextItem splits a list at its first sep: the item before it and the rest
// after it (nil when there is no sep).
func nextItem(list []byte, sep byte) (item, rest []byte) {
	if i := bytes.IndexByte(list, sep); i >= 0 {
		return list[:i], list[i+1:]
	}
	return list, nil
}
