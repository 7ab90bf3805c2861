#include "CYAML.h"

#include <stdlib.h>
#include <string.h>

#include <yaml.h>

struct CYAML_parser {
    yaml_parser_t parser;
    yaml_event_t event;
    int has_event;
};

CYAML_parser *CYAML_parser_create(const uint8_t *bytes, size_t length) {
    CYAML_parser *result = calloc(1, sizeof(*result));
    if (result == NULL) return NULL;
    if (!yaml_parser_initialize(&result->parser)) {
        free(result);
        return NULL;
    }
    yaml_parser_set_input_string(&result->parser, bytes, length);
    return result;
}

static void release_event(CYAML_parser *parser) {
    if (parser->has_event) {
        yaml_event_delete(&parser->event);
        parser->has_event = 0;
    }
}

static int32_t scalar_style(yaml_scalar_style_t style) {
    switch (style) {
    case YAML_SINGLE_QUOTED_SCALAR_STYLE:
    case YAML_DOUBLE_QUOTED_SCALAR_STYLE:
        return CYAML_SCALAR_QUOTED;
    case YAML_LITERAL_SCALAR_STYLE:
    case YAML_FOLDED_SCALAR_STYLE:
        return CYAML_SCALAR_BLOCK;
    default:
        return CYAML_SCALAR_PLAIN;
    }
}

int32_t CYAML_parser_next(CYAML_parser *parser, CYAML_event *out) {
    release_event(parser);
    *out = (CYAML_event){0};
    if (!yaml_parser_parse(&parser->parser, &parser->event)) return 0;
    parser->has_event = 1;
    const yaml_event_t *event = &parser->event;
    out->line = (uint64_t)event->start_mark.line + 1;
    out->column = (uint64_t)event->start_mark.column + 1;
    const yaml_char_t *tag = NULL;
    switch (event->type) {
    case YAML_STREAM_START_EVENT: out->kind = CYAML_EVENT_STREAM_START; break;
    case YAML_STREAM_END_EVENT: out->kind = CYAML_EVENT_STREAM_END; break;
    case YAML_DOCUMENT_START_EVENT: out->kind = CYAML_EVENT_DOCUMENT_START; break;
    case YAML_DOCUMENT_END_EVENT: out->kind = CYAML_EVENT_DOCUMENT_END; break;
    case YAML_ALIAS_EVENT:
        out->kind = CYAML_EVENT_ALIAS;
        out->text = event->data.alias.anchor;
        out->text_length = event->data.alias.anchor ? strlen((const char *)event->data.alias.anchor) : 0;
        break;
    case YAML_SCALAR_EVENT:
        out->kind = CYAML_EVENT_SCALAR;
        out->scalar_style = scalar_style(event->data.scalar.style);
        out->text = event->data.scalar.value;
        out->text_length = event->data.scalar.length;
        tag = event->data.scalar.tag;
        break;
    case YAML_SEQUENCE_START_EVENT:
        out->kind = CYAML_EVENT_SEQUENCE_START;
        tag = event->data.sequence_start.tag;
        break;
    case YAML_SEQUENCE_END_EVENT: out->kind = CYAML_EVENT_SEQUENCE_END; break;
    case YAML_MAPPING_START_EVENT:
        out->kind = CYAML_EVENT_MAPPING_START;
        tag = event->data.mapping_start.tag;
        break;
    case YAML_MAPPING_END_EVENT: out->kind = CYAML_EVENT_MAPPING_END; break;
    default: out->kind = CYAML_EVENT_NONE; break;
    }
    if (tag != NULL) {
        out->tag = tag;
        out->tag_length = strlen((const char *)tag);
    }
    return 1;
}

CYAML_error CYAML_parser_error(const CYAML_parser *parser) {
    CYAML_error error = {0};
    error.problem = parser->parser.problem ? parser->parser.problem : "the YAML parser failed";
    error.context = parser->parser.context;
    switch (parser->parser.error) {
    case YAML_READER_ERROR:
        error.offset = (uint64_t)parser->parser.problem_offset;
        break;
    case YAML_SCANNER_ERROR:
    case YAML_PARSER_ERROR:
        // libyaml counts from 0.
        error.line = (uint64_t)parser->parser.problem_mark.line + 1;
        error.column = (uint64_t)parser->parser.problem_mark.column + 1;
        break;
    default:
        break;
    }
    return error;
}

void CYAML_parser_destroy(CYAML_parser *parser) {
    if (parser == NULL) return;
    release_event(parser);
    yaml_parser_delete(&parser->parser);
    free(parser);
}
