// A flat view of libyaml's event parser for Swift.
//
// Swift never sees <yaml.h>: its parser and event structs are unions of pointers whose lifetime
// rules are easy to get wrong from Swift. This header declares fixed-width types of our own;
// shim.c owns the libyaml parser and the current event, and hands out views into the event that
// stay valid until the next call. Symbols are prefixed with the module name.
#ifndef CYAML_H
#define CYAML_H

#include <stddef.h>
#include <stdint.h>

/// A parser over one in-memory document. Opaque: it owns a `yaml_parser_t` and one event.
typedef struct CYAML_parser CYAML_parser;

/// The kinds of event, in libyaml's order.
enum {
    CYAML_EVENT_NONE = 0,
    CYAML_EVENT_STREAM_START = 1,
    CYAML_EVENT_STREAM_END = 2,
    CYAML_EVENT_DOCUMENT_START = 3,
    CYAML_EVENT_DOCUMENT_END = 4,
    CYAML_EVENT_ALIAS = 5,
    CYAML_EVENT_SCALAR = 6,
    CYAML_EVENT_SEQUENCE_START = 7,
    CYAML_EVENT_SEQUENCE_END = 8,
    CYAML_EVENT_MAPPING_START = 9,
    CYAML_EVENT_MAPPING_END = 10,
};

/// How a scalar was written: plain scalars are the only ones YAML resolves to null, booleans and
/// numbers.
enum {
    CYAML_SCALAR_PLAIN = 1,
    CYAML_SCALAR_QUOTED = 2,   // single or double quoted
    CYAML_SCALAR_BLOCK = 3,    // literal (|) or folded (>)
};

/// One event. `text` is the scalar's value (or the alias's anchor), `tag` an explicit tag (NULL
/// when none); both are views into the parser's current event, valid until the next
/// `CYAML_parser_next` or `CYAML_parser_destroy`. Lines and columns count from 1.
typedef struct CYAML_event {
    int32_t kind;
    int32_t scalar_style;
    const uint8_t *text;
    size_t text_length;
    const uint8_t *tag;
    size_t tag_length;
    uint64_t line;
    uint64_t column;
} CYAML_event;

/// Why parsing stopped, with the place of the problem: a line and column (from 1) for a syntax
/// error, a byte offset for bytes that are not UTF-8 (`line` 0). The strings are libyaml's and
/// live as long as the parser.
typedef struct CYAML_error {
    const char *problem;
    const char *context;
    uint64_t line;
    uint64_t column;
    uint64_t offset;
} CYAML_error;

/// A parser over `length` bytes at `bytes`, which must stay valid and unchanged while the parser
/// lives. NULL when memory runs out.
CYAML_parser *CYAML_parser_create(const uint8_t *bytes, size_t length);

/// The next event into `out`: 1 on success, 0 on a syntax error (then see `CYAML_parser_error`).
int32_t CYAML_parser_next(CYAML_parser *parser, CYAML_event *out);

/// The error after `CYAML_parser_next` returned 0.
CYAML_error CYAML_parser_error(const CYAML_parser *parser);

/// Frees the parser and its current event. NULL is ignored.
void CYAML_parser_destroy(CYAML_parser *parser);

#endif
