// libFuzzer target: the stored-file decoders, through the real file stores (see Behaviour P2, E4).
//
// Input layout: byte 0 picks the file (customer.json, segment-baseline.json or
// event-queue.journal), the rest is its content. The file is written into a fresh storage
// directory (on /dev/shm when there is one, so syncs cost nothing) and the store is opened on it.
// Properties checked beyond "no crash, no memory error":
// - the store loads exactly what the decoder reads directly (nothing when the file is unusable);
// - an unusable file is set aside byte for byte, never deleted, and never left in place;
// - the store works afterwards: what is saved (or appended and removed) is what a new store loads.
import Foundation
import SegmentsDomain
@testable import SegmentsPersistence

private struct SilentLogger: SegmentsLogger {
    var logLevel: LogLevel { .verbose }
    func log(_ level: LogLevel, _ message: String) {}
}

/// One directory per process, emptied before every input.
private let directory: URL = {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let url = URL(fileURLWithPath: base).appendingPathComponent("segments-fuzz-\(getpid())")
    try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}()

/// Removes the directory when libFuzzer ends the process normally.
private let removeDirectoryAtExit: Void = {
    atexit { try? FileManager.default.removeItem(at: directory) }
}()

private func emptyDirectory() {
    removeDirectoryAtExit
    for name in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] {
        unlink(directory.appendingPathComponent(name).path)
    }
}

private func contents(_ name: String) -> Data? {
    // The store's own reader: `FileManager.contents(atPath:)` leaks 4 KiB per empty file on Linux.
    try? POSIXFile.contents(of: directory.appendingPathComponent(name).path)
}

/// After loading a damaged file: the original bytes are kept aside, and the name is free or rebuilt.
private func requireSetAside(_ name: String, original: Data, rebuilt: Bool) {
    require(contents(name + ".corrupt-1") == original, "\(name): the damaged bytes were not kept aside")
    if rebuilt {
        require(contents(name) != original, "\(name): the damaged file is still in use")
    } else {
        require(contents(name) == nil, "\(name): the damaged file is still in place")
    }
}

private func fuzzCustomer(_ file: Data) {
    let decoded = try? VersionedJSON.decode(CustomerRecord.self, from: file)
    let loaded = FileCustomerStore(directory: directory, logger: SilentLogger()).load()
    require(loaded == decoded?.customer, "customer: the store loaded something else than the decoder read")
    if decoded == nil { requireSetAside(FileCustomerStore.fileName, original: file, rebuilt: false) }

    let next = loaded.map { $0.merging(hardIds: ["registered": "fuzz"]) } ?? CustomerIds(cookie: "fuzz")
    do {
        try FileCustomerStore(directory: directory, logger: SilentLogger()).save(next)
    } catch {
        fatalError("customer: saving after recovery failed: \(error)")
    }
    require(FileCustomerStore(directory: directory, logger: SilentLogger()).load() == next, "customer: round trip")
}

private func fuzzBaseline(_ file: Data) {
    let decoded = try? VersionedJSON.decode(BaselineRecord.self, from: file)
    let loaded = FileSegmentBaselineStore(directory: directory, logger: SilentLogger()).load()
    require(loaded == (decoded?.baseline ?? .empty), "baseline: the store loaded something else than the decoder read")
    if decoded == nil { requireSetAside(FileSegmentBaselineStore.fileName, original: file, rebuilt: false) }

    // What was read must survive being written again: the next save of an unchanged baseline.
    do {
        try FileSegmentBaselineStore(directory: directory, logger: SilentLogger()).save(loaded)
    } catch {
        fatalError("baseline: saving the loaded baseline failed: \(error)")
    }
    require(FileSegmentBaselineStore(directory: directory, logger: SilentLogger()).load() == loaded, "baseline: round trip")
}

private func fuzzJournal(_ file: Data) {
    let replay: JournalReplay?
    do throws(DecodeFailure) {
        replay = try JournalReplay.replay(file)
    } catch {
        replay = nil
    }
    let store = FileEventQueueStore(directory: directory, logger: SilentLogger())
    let loaded = store.load()
    require(loaded == (replay?.events.ordered ?? []), "journal: the store loaded something else than the replay")
    if let replay {
        if replay.unreadableLines > 0 { requireSetAside(EventJournal.fileName, original: file, rebuilt: true) }
    } else {
        requireSetAside(EventJournal.fileName, original: file, rebuilt: true)
    }

    // The queue keeps working on the recovered file: a new item is appended after the loaded
    // ones, a removal sticks, and a new store (a restart) sees exactly that.
    let added = TrackedEvent(
        kind: .event(type: "fuzz"), customerIds: CustomerIds(cookie: "fuzz"), properties: ["n": 1],
        timestamp: Date(timeIntervalSinceReferenceDate: 1))
    var expected = loaded
    do {
        try store.append(added)
        expected.append(added)
        if let first = loaded.first {
            try store.remove(id: first.id)
            expected.removeFirst()
        }
    } catch {
        fatalError("journal: changing the queue after recovery failed: \(error)")
    }
    let restarted = FileEventQueueStore(directory: directory, logger: SilentLogger()).load()
    require(restarted == expected, "journal: a restart lost or invented items (\(restarted.count) vs \(expected.count))")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func storedFilesFuzzTarget(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count >= 1 else { return 0 }
    let file = fuzzData(bytes + 1, count - 1)
    emptyDirectory()
    let name: String
    let body: (Data) -> Void
    switch bytes[0] % 3 {
    case 0: (name, body) = (FileCustomerStore.fileName, fuzzCustomer)
    case 1: (name, body) = (FileSegmentBaselineStore.fileName, fuzzBaseline)
    default: (name, body) = (EventJournal.fileName, fuzzJournal)
    }
    require(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: file),
            "cannot write the input file")
    body(file)
    return 0
}
