// libFuzzer target: the emulator's incremental HTTP/1.x request parser.
//
// Input layout: byte 0 chooses where the rest is split into two `append` calls, byte 1 chooses
// the parser's limits (small ones reach the 431/413 paths with short inputs), the rest is what a
// client sent. Properties checked beyond "no crash, no memory error":
// - the parser reaches the same requests and the same final state whether the bytes arrive at
//   once or in two pieces (a server must not depend on how `recv` splits a stream);
// - every request's body has the length its `Content-Length` announced, within the limit;
// - a failure is sticky.
import Foundation
@testable import SegmentsEmulator

/// What one parser produced: the complete requests, then how it stopped.
private struct Transcript: Equatable {
    var requests: [ParsedHTTPRequest] = []
    var end: HTTPRequestParser.Outcome = .needMoreData
}

/// Takes requests out until the parser needs more bytes or fails; records them in `transcript`.
private func drain(_ parser: inout HTTPRequestParser, into transcript: inout Transcript) {
    while true {
        let outcome = parser.next()
        switch outcome {
        case .request(let request):
            check(request, limit: parser.maxBodyBytes)
            transcript.requests.append(request)
        case .needMoreData:
            _ = parser.takeContinueRequest()
            transcript.end = outcome
            return
        case .failure:
            require(parser.next() == outcome, "a failure is not sticky")
            transcript.end = outcome
            return
        }
    }
}

private func check(_ request: ParsedHTTPRequest, limit: Int) {
    require(request.body.count <= limit, "a body over the limit was accepted")
    let announced = request.header("Content-Length").flatMap { Int($0) } ?? 0
    require(request.body.count == announced, "body length \(request.body.count) ≠ Content-Length \(announced)")
    require(request.version == "HTTP/1.1" || request.version == "HTTP/1.0", "version \(request.version)")
    _ = request.keepsAlive
}

@_cdecl("LLVMFuzzerTestOneInput")
public func httpParserFuzzTarget(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count >= 2 else { return 0 }
    let input = UnsafeBufferPointer(start: bytes, count: count)
    let stream = Array(input[2...])
    let split = stream.isEmpty ? 0 : Int(input[0]) * stream.count / 255
    let headerLimits = [16 * 1024, 40, 200, 1024]
    let bodyLimits = [1024 * 1024, 0, 10, 300]
    let maxHeaderBytes = headerLimits[Int(input[1] & 3)]
    let maxBodyBytes = bodyLimits[Int(input[1] >> 2 & 3)]

    var whole = HTTPRequestParser(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    var wholeTranscript = Transcript()
    whole.append(stream)
    drain(&whole, into: &wholeTranscript)

    var pieces = HTTPRequestParser(maxHeaderBytes: maxHeaderBytes, maxBodyBytes: maxBodyBytes)
    var piecesTranscript = Transcript()
    pieces.append(stream[..<split])
    drain(&pieces, into: &piecesTranscript)
    if case .needMoreData = piecesTranscript.end {
        pieces.append(stream[split...])
        drain(&pieces, into: &piecesTranscript)
    }
    require(
        wholeTranscript == piecesTranscript,
        "split at \(split) of \(stream.count) changed the outcome: \(wholeTranscript) vs \(piecesTranscript)")
    if case .needMoreData = wholeTranscript.end {
        require(whole.bufferedByteCount == pieces.bufferedByteCount, "different bytes left over")
    }
    return 0
}
