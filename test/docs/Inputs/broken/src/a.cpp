// See docs/Design.md, "Paged KV".
// And docs/Design.md, "Paged KV tables".
