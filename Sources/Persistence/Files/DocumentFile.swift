import Foundation
import SegmentsDomain

/// One small JSON document in the storage directory, replaced whole on every save: the shared
/// mechanics of the customer, baseline and visitor stores.
///
/// Reading never throws: a missing file is ``StoredDocument/absent``; a damaged, wrong-shaped or
/// newer-format file is logged, set aside and read as absent, so the owner starts from its empty
/// state and the next save rebuilds the file (<doc:Behaviour#P2>). A file the system refuses because
/// protected data is not available yet is ``StoredDocument/protectedDataUnavailable``: left in
/// place, neither set aside nor replaced, and read again later (<doc:Behaviour#P8>). A file it
/// refuses while protected data is available is ``StoredDocument/refused(_:)``: a storage error,
/// the file left in place.
struct DocumentFile<Record: VersionedRecord>: Sendable {
    /// The directory holding the file.
    let directory: StorageDirectory
    /// The file's name.
    let name: String
    /// Where recovery is reported.
    let diagnostics: StoreDiagnostics
    /// Tells a refusal that protected data explains from a storage error (<doc:Behaviour#P8>).
    var refusals: StorageRefusals = .unreported
    /// The largest file read (<doc:Behaviour#P7>): a bigger one is set aside unread, and a record
    /// that would encode bigger is not written (``write(_:)``).
    var maximumSize = POSIXFile.maximumDocumentSize

    /// The stored record, `.absent` when there is none or it is unusable,
    /// `.protectedDataUnavailable` when it cannot be read yet, or `.refused` when the system refuses
    /// it while protected data is available.
    func read() -> StoredDocument<Record> {
        do {
            try directory.create()
        } catch {
            return unreadable(error)
        }
        directory.removeStrayTemporaries(of: name)
        let data: Data
        do {
            guard let contents = try POSIXFile.contents(of: directory.path(of: name), maximumSize: maximumSize) else {
                diagnostics.missing(name)
                return .absent
            }
            data = contents
        } catch let untrusted as UntrustedFile {
            let asideName = directory.setAside(name)
            diagnostics.setAside(name, problem: .untrusted(untrusted), asideName: asideName, detail: nil)
            return .absent
        } catch {
            return unreadable(error)
        }
        do throws(DecodeFailure) {
            return .record(try VersionedJSON.decode(Record.self, from: data))
        } catch {
            let asideName = directory.setAside(name)
            diagnostics.setAside(name, problem: error.problem, asideName: asideName, detail: error.detail)
            return .absent
        }
    }

    /// A read that failed: a refusal is transient while protected data is unavailable, and
    /// otherwise a storage error (<doc:Behaviour#P8>); any other failure is logged and read as
    /// absent. The file stays in place in every case.
    private func unreadable(_ error: any Error) -> StoredDocument<Record> {
        let settled = refusals.settled(error)
        if ProtectedDataUnavailable.isProtectedDataUnavailable(settled) {
            diagnostics.protectedDataUnavailable(name, doing: "read")
            return .protectedDataUnavailable
        }
        if ProtectedDataUnavailable.isProtectedDataUnavailable(error) {
            let error = SegmentsError.wrapping(settled, as: .storage)
            diagnostics.refused(name, error: error)
            return .refused(error)
        }
        diagnostics.unreadable(name, error: error)
        return .absent
    }

    /// Replaces the stored record atomically.
    ///
    /// A record that encodes larger than ``maximumSize`` is not written (<doc:Behaviour#P7>): the
    /// next start would set the file aside unread and lose all of it. ``SegmentsError`` `.storage`
    /// is thrown (its underlying error a ``DocumentTooLarge``), and the previous file stays as it was.
    func write(_ record: Record) throws {
        let data = try VersionedJSON.encode(record)
        guard data.count <= maximumSize else {
            throw SegmentsError(
                .storage,
                "The \(diagnostics.subject) would take \(Self.kibibytes(data.count)) KiB, more than the "
                    + "\(Self.kibibytes(maximumSize)) KiB read back at the next start; not saved, the previous file is kept",
                underlying: DocumentTooLarge(size: data.count, limit: maximumSize))
        }
        try directory.create()
        try directory.replace(name, with: data)
    }

    /// `bytes` in KiB, rounded up, so a size just past a limit never reads as the limit.
    private static func kibibytes(_ bytes: Int) -> Int {
        (bytes + 1023) >> 10
    }

    /// ``write(_:)``, and when it fails, deletes the stored record before throwing, so the old one
    /// can never be read again (after a restart it would bring back what the failed write replaced,
    /// e.g. a logged-out customer's hard ids). Deleting needs no free space, so it works on a full
    /// disk. Returns normally only when the write succeeded.
    ///
    /// A write refused because protected data is not available deletes nothing (<doc:Behaviour#P8>):
    /// the error thrown then answers `isProtectedDataUnavailable`, and `deleted` is not called. Nor
    /// does a record too large to be read back (<doc:Behaviour#P7>): nothing was written, so the
    /// previous file stays, and `deleted` is not called. Any other refusal is a failed write like a
    /// full disk's.
    ///
    /// - Throws: ``SegmentsError`` `.storage`, saying whether the old file was deleted.
    /// - Parameter deleted: called with whether the old file is gone, before the error is thrown.
    func writeOrDelete(_ record: Record, deleted: (Bool) -> Void) throws {
        do {
            try write(record)
        } catch let error as SegmentsError where error.underlying is DocumentTooLarge {
            diagnostics.log(.error, "Could not save the \(diagnostics.subject): \(error.message)")
            throw error
        } catch {
            let error = refusals.settled(error)
            if ProtectedDataUnavailable.isProtectedDataUnavailable(error) {
                // Not now, rather than never: the old file stays, the caller keeps the record in
                // memory and saves it again when protected data becomes available (see Behaviour P8).
                diagnostics.protectedDataUnavailable(name, doing: "saved")
                throw SegmentsError.wrapping(error, as: .storage)
            }
            let gone = directory.remove(name)
            deleted(gone)
            let cause = SegmentsError.wrapping(error, as: .storage)
            let outcome = gone ? "the previous file was deleted" : "the previous file could not be deleted either"
            diagnostics.log(.error, "Could not save the \(diagnostics.subject) (\(cause.message)); \(outcome)")
            throw SegmentsError(.storage, "\(cause.message); \(outcome)", underlying: error)
        }
    }
}

/// A record that would be written larger than its file's reader accepts (<doc:Behaviour#P7>): the
/// underlying error of the `.storage` error ``DocumentFile/write(_:)`` throws instead of writing it.
struct DocumentTooLarge: Error, Hashable, Sendable {
    /// The record's encoded size, in bytes.
    let size: Int
    /// The largest file read back, in bytes.
    let limit: Int
}

/// What ``DocumentFile/read()`` found.
enum StoredDocument<Record> {
    /// The stored record.
    case record(Record)
    /// No usable record: none yet, or a damaged one that was set aside (<doc:Behaviour#P2>).
    case absent
    /// The file could not be read because protected data is not available yet (<doc:Behaviour#P8>):
    /// it is still there, unread.
    case protectedDataUnavailable
    /// The system refused the file (`EACCES`/`EPERM`) while protected data is available
    /// (<doc:Behaviour#P8>): a permission problem, the `.storage` error naming the file. The file is
    /// still there, unread.
    case refused(SegmentsError)

    /// The record, or `nil` when there is none or it could not be read.
    var record: Record? {
        if case .record(let record) = self { return record }
        return nil
    }
}
