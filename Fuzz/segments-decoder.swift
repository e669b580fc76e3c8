// libFuzzer target: the Bloomreach segments body decoder (Behaviour, wire format, "Segment answers").
//
// Properties checked beyond "no crash, no memory error":
// - a rejected body fails with `.invalidResponse` and nothing else;
// - an accepted answer survives a round trip: encoded back to the wire shape and decoded again it
//   gives the same segments, with nothing dropped the second time.
import Foundation
import SegmentsDomain
@testable import SegmentsNetworking

/// Builds every message (so interpolation runs) and counts warnings.
private final class CountingLogger: SegmentsLogger, @unchecked Sendable {
    var warnings = 0
    var logLevel: LogLevel { .verbose }
    func log(_ level: LogLevel, _ message: String) {
        if level == .warning { warnings += 1 }
        require(message.hasPrefix("Segments:"), "log line without the Segments: prefix: \(message)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func segmentsDecoderFuzzTarget(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let body = fuzzData(bytes, count)
    let segments: SegmentsByCategory
    do {
        segments = try BloomreachSegmentsDecoder.decode(body, logger: CountingLogger())
    } catch let error as SegmentsError {
        require(error.code == .invalidResponse, "rejected with \(error.code), not invalidResponse")
        return 0
    } catch {
        fatalError("the decoder threw a non-SegmentsError: \(error)")
    }

    var wire: [String: [[String: String]]] = [:]
    for (category, list) in segments { wire[category.name] = list.map(\.wireFields) }
    let encoded: Data
    do {
        encoded = try JSONEncoder().encode(wire)
    } catch {
        fatalError("an accepted answer cannot be encoded again: \(error)")
    }
    let logger = CountingLogger()
    guard let again = try? BloomreachSegmentsDecoder.decode(encoded, logger: logger) else {
        fatalError("the re-encoded answer is rejected")
    }
    require(again == segments, "the round trip changed the segments")
    require(logger.warnings == 0, "the round trip dropped segments")
    return 0
}
