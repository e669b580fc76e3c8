// libFuzzer target: every JSON entry point, fed text in UTF-8, UTF-16 or UTF-32 (Behaviour P7 rev 4,
// P9; issue 31, finding 1).
//
// The input's first byte picks an encoding (and whether a byte-order mark leads); the rest is read
// as UTF-8 text and re-encoded in it, so the fuzzer's deep `[[[…` texts reach every decoder in
// every encoding Foundation would convert. Each input is decoded on a thread with Apple's 512 KiB
// secondary-thread stack. Properties checked beyond "no crash, no memory error":
// - the network decoders reject with `.invalidResponse` only, and a body with a zero byte or a
//   UTF-16/32 byte-order mark is refused as "not UTF-8" before anything parses it;
// - a stored document in such an encoding is refused as `.notUTF8`;
// - the emulator's parser refuses it too.
import Foundation
import SegmentsDomain
import SegmentsEmulator
@testable import SegmentsNetworking
@testable import SegmentsPersistence

#if canImport(Glibc)
import Glibc
#endif

/// The encodings the first byte picks from: index 0 is UTF-8 as given.
private let encodings: [(name: String, mark: [UInt8], encode: (String) -> [UInt8])] = [
    ("UTF-8", [], { Array($0.utf8) }),
    ("UTF-16LE", [], { $0.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }),
    ("UTF-16BE", [], { $0.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }),
    ("UTF-32LE", [], { $0.unicodeScalars.flatMap { s in (0..<4).map { UInt8((s.value >> (8 * $0)) & 0xFF) } } }),
    ("UTF-32BE", [], { $0.unicodeScalars.flatMap { s in (0..<4).reversed().map { UInt8((s.value >> (8 * $0)) & 0xFF) } } }),
    ("UTF-16LE+BOM", [0xFF, 0xFE], { $0.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] } }),
    ("UTF-16BE+BOM", [0xFE, 0xFF], { $0.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] } }),
    ("UTF-8+BOM", [0xEF, 0xBB, 0xBF], { Array($0.utf8) }),
]

/// Runs `body` on a new thread with a 512 KiB stack and waits for it.
private func onSmallStack(_ body: @escaping () -> Void) {
    final class Box { let body: () -> Void; init(_ body: @escaping () -> Void) { self.body = body } }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setstacksize(&attributes, 512 * 1024)
    var thread = pthread_t()
    let box = Unmanaged.passRetained(Box(body)).toOpaque()
    let started = pthread_create(&thread, &attributes, { pointer in
        Unmanaged<Box>.fromOpaque(pointer!).takeRetainedValue().body()
        return nil
    }, box)
    require(started == 0, "pthread_create failed: \(started)")
    pthread_join(thread, nil)
    pthread_attr_destroy(&attributes)
}

private final class QuietLogger: SegmentsLogger, @unchecked Sendable {
    var logLevel: LogLevel { .verbose }
    func log(_ level: LogLevel, _ message: String) {
        require(message.hasPrefix("Segments:"), "log line without the Segments: prefix: \(message)")
    }
}

/// Whether `error` is a network decoder's refusal, and says "not UTF-8" when `foreign`.
private func checkRefusal(_ error: any Error, foreign: Bool, _ entry: String) {
    guard let error = error as? SegmentsError else { fatalError("\(entry) threw a non-SegmentsError: \(error)") }
    require(error.code == .invalidResponse, "\(entry) rejected with \(error.code), not invalidResponse")
    if foreign { require(error.message.contains("not UTF-8"), "\(entry) parsed a foreign text: \(error.message)") }
}

@_cdecl("LLVMFuzzerTestOneInput")
public func jsonEncodingsFuzzTarget(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let encoding = encodings[Int(bytes[0]) % encodings.count]
    let text = String(decoding: UnsafeBufferPointer(start: bytes + 1, count: count - 1), as: UTF8.self)
    let data = Data(encoding.mark + encoding.encode(text))
    // What the rule says is foreign: a UTF-16/32 byte-order mark, or a zero byte anywhere.
    let foreign = data.contains(0) || data.starts(with: [0xFF, 0xFE]) || data.starts(with: [0xFE, 0xFF])
    require(foreign == (JSONText.foreignEncoding(of: data) != nil), "\(encoding.name): the check disagrees with the rule")

    onSmallStack {
        do { _ = try BloomreachSegmentsDecoder.decode(data, logger: QuietLogger()) } catch {
            checkRefusal(error, foreign: foreign, "the segments decoder")
        }
        do { _ = try ODPResponseDecoder.decode(data) } catch {
            checkRefusal(error, foreign: foreign, "the ODP decoder")
        }
        do { _ = try ODPDatafile.candidateSegments(from: data) } catch {
            checkRefusal(error, foreign: foreign, "the datafile reader")
        }
        do throws(DecodeFailure) {
            _ = try VersionedJSON.decode(CustomerRecord.self, from: data)
            require(!foreign, "a stored document in \(encoding.name) was read")
        } catch {
            if foreign, !data.isEmpty {
                guard case .notUTF8 = error.problem else { fatalError("a foreign stored document was parsed: \(error.problem)") }
            }
        }
        if let _ = try? EmulatorJSON(jsonData: data) { require(!foreign, "the emulator read a text in \(encoding.name)") }
    }
    return 0
}
