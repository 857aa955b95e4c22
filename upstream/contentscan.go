package upstream

// The content list (the answer of a content type's view, six of which a
// cold hub reads) decoded by the inventory scanner (pagescan.go): the same
// accept/reject and result as the field reader, proven by
// TestContentScannerEqualsFieldReader and FuzzContentScanner.

// scanObject reads an object (null leaves dst as it is), calling field for
// every member; field reads the member's value into dst. field is a plain
// function, not a closure, so a member costs an indirect call and nothing
// else.
func scanObject[T any](s *invScanner, dst *T, field func(s *invScanner, dst *T, name string) error) error {
	null, err := s.beginObject()
	if err != nil || null {
		return err
	}
	for first := true; ; {
		name, more, err := s.member(&first)
		if err != nil || !more {
			return err
		}
		if err := field(s, dst, name); err != nil {
			return named(name, err)
		}
	}
}

func (s *invScanner) contentList(l *contentList) error {
	return scanObject(s, l, func(s *invScanner, l *contentList, name string) error {
		if name == "items" {
			return s.contentItems(&l.Items)
		}
		return s.skip()
	})
}

// maxPooledRecords bounds the record buffer a pooled scanner keeps.
const maxPooledRecords = 1024

// contentItems reads the items array into *dst as scanList does (null is
// nil, [] is empty, the elements start from their zero value), through
// the scanner's own record buffer: a list of unknown length grown there
// (a record is a large struct; growing the result itself copied and
// zeroed every record several times over) and copied out at its exact
// length. The buffer is cleared after use, so a pooled scanner keeps no
// strings alive.
func (s *invScanner) contentItems(dst *[]ContentRecord) error {
	buf := s.records[:0]
	err := scanList(s, &buf, (*invScanner).content)
	switch {
	case buf == nil:
		*dst = nil
	default:
		*dst = append(make([]ContentRecord, 0, len(buf)), buf...)
		clear(buf)
		if cap(buf) <= maxPooledRecords {
			s.records = buf[:0]
		}
	}
	return err
}

func (s *invScanner) content(c *ContentRecord) error { return scanObject(s, c, contentField) }

func contentField(s *invScanner, c *ContentRecord, name string) (err error) {
	switch name {
	case "id":
		c.ID, err = s.int64()
	case "type":
		c.Type, err = s.str()
	case "dealer_id":
		c.DealerID, err = s.int64()
	case "slug":
		c.Slug, err = s.str()
	case "topic":
		c.Topic, err = s.str()
	case "category":
		c.Category, err = s.str()
	case "brand":
		c.Brand, err = s.str()
	case "title":
		c.Title, err = s.str()
	case "h1":
		c.H1, err = s.str()
	case "meta_description":
		c.MetaDescription, err = s.str()
	case "excerpt":
		c.Excerpt, err = s.str()
	case "body_text":
		c.BodyText, err = s.str()
	case "url":
		c.URL, err = s.str()
	case "updated_at":
		c.UpdatedAt, err = s.time()
	case "source_provider":
		c.SourceProvider, err = s.str()
	case "override_of":
		c.OverrideOf, err = s.int64()
	case "hidden_for_dealer":
		c.HiddenForDealer, err = s.bool()
	case "media_url":
		c.MediaURL, err = s.str()
	case "thumbnail_url":
		c.ThumbnailURL, err = s.str()
	case "duration_seconds":
		c.DurationSeconds, err = s.int()
	case "transcript":
		c.Transcript, err = s.str()
	default: // template_id, source_id, body_html, render_payload, seo_payload, unknown
		err = s.skip()
	}
	return err
}
