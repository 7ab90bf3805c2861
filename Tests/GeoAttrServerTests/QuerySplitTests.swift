@testable import GeoAttrServer
import Testing

/// The request target's query, as routing sees it; cases the fuzzer found (scripts/fuzz.sh http).
@Suite("Query split")
struct QuerySplitTests {
    @Test func plainTargetHasNoQuery() {
        let (path, query) = APIRequest.split("/v1/attributes")
        #expect(path == "/v1/attributes")
        #expect(query.isEmpty)
    }

    @Test func namesAndValues() {
        let (path, query) = APIRequest.split("/v1/attributes?format=otel&x&wait=1=2")
        #expect(path == "/v1/attributes")
        #expect(query == ["format": "otel", "x": "", "wait": "1=2"])
    }

    /// A pair that is only "=" (or starts with it) once took the daemon down with an index out of
    /// range: `GET /v1/attributes?= HTTP/1.1` from any client allowed on the socket.
    @Test func emptyNamesDoNotCrash() {
        #expect(APIRequest.split("/v1/attributes?=").1 == ["": ""])
        #expect(APIRequest.split("/v1/attributes?format=env&x&==").1 == ["format": "env", "x": "", "": "="])
        #expect(APIRequest.split("/v1/attributes?=json&format=json").1 == ["": "json", "format": "json"])
        #expect(APIRequest.split("/?&&=&").0 == "/")
    }

    @Test("query names and values are percent-decoded; a malformed escape is kept as sent")
    func percentDecoding() {
        #expect(APIRequest.split("/v1/refresh?wait=1e%2B2").1 == ["wait": "1e+2"])
        #expect(APIRequest.split("/v1/attributes?for%6Dat=%6Ftel").1 == ["format": "otel"])
        #expect(APIRequest.split("/v1/attributes?format=%4").1 == ["format": "%4"])
        #expect(APIRequest.split("/v1/attributes?format=%zz").1 == ["format": "%zz"])
        #expect(APIRequest.split("/v1/attributes?format=%C3%BC").1 == ["format": "ü"])
        #expect(APIRequest.split("/v1/attributes?format=%FF").1 == ["format": "%FF"])
    }
}
