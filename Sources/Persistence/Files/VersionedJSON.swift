import Foundation
import SegmentsDomain

/// A record stored as versioned JSON: `{"version": 1, …}`.
protocol VersionedRecord: Codable {
    /// The format version this SDK writes and reads.
    static var currentVersion: Int { get }
    /// Whether every number of the record is within its documented range (<doc:Behaviour#P7>);
    /// a record with one out of range is unreadable, like a damaged one (P2). The version is
    /// checked by ``VersionedJSON/decode(_:from:)`` itself.
    var numbersAreInRange: Bool { get }
}

extension VersionedRecord {
    /// A record without numbers besides its version.
    var numbersAreInRange: Bool { true }
}

/// Decoding of versioned JSON that tells apart the ways a stored file can be unusable, so the
/// log says what happened (<doc:Behaviour#P2>).
enum VersionedJSON {
    /// Just the version, read before the rest so a newer format is recognised as such rather
    /// than reported as damage.
    private struct VersionProbe: Decodable {
        let version: Int
    }

    /// Decodes `data` as `Record`, or throws a ``StoredFileProblem`` paired with the decoder's
    /// detail.
    static func decode<Record: VersionedRecord>(_ type: Record.Type, from data: Data) throws(DecodeFailure) -> Record {
        guard !data.isEmpty else { throw DecodeFailure(problem: .empty, detail: nil) }
        // Before any parser: a planted, deeply nested file could overflow the stack, and one in
        // UTF-16 or UTF-32 would hide its depth from the scan (Foundation's decoders convert it).
        switch JSONText.refusal(of: data) {
        case .notUTF8(let encoding): throw DecodeFailure(problem: .notUTF8(encoding: encoding), detail: nil)
        case .tooDeep: throw DecodeFailure(problem: .wrongShape, detail: nil)
        case nil: break
        }
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw DecodeFailure(problem: .notJSON, detail: error)
        }
        let decoder = JSONDecoder()
        let version: Int
        do {
            version = try decoder.decode(VersionProbe.self, from: data).version
        } catch {
            throw DecodeFailure(problem: .wrongShape, detail: error)
        }
        if version > Record.currentVersion { throw DecodeFailure(problem: .futureVersion(version), detail: nil) }
        guard version == Record.currentVersion else { throw DecodeFailure(problem: .wrongShape, detail: nil) }
        let record: Record
        do {
            record = try decoder.decode(Record.self, from: data)
        } catch {
            throw DecodeFailure(problem: .wrongShape, detail: error)
        }
        guard record.numbersAreInRange else { throw DecodeFailure(problem: .wrongShape, detail: nil) }
        return record
    }

    /// Encodes `record` compactly; keys are sorted so equal records give equal bytes.
    static func encode<Record: Encodable>(_ record: Record) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(record)
    }
}

/// Why decoding failed: the kind of damage, and the decoder's error for verbose logs.
struct DecodeFailure: Error {
    /// The kind of damage.
    let problem: StoredFileProblem
    /// The decoder's error, if it gave one.
    let detail: (any Error)?
}
