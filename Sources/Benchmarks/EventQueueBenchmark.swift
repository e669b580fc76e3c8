import Foundation
import SegmentsDomain
import RealtimeSegments
import SegmentsTesting

/// Benchmark 7: durable appends per second to the event queue at a length of 10 and of 10,000,
/// ``FileEventQueueStore`` (append-only journal, an append plus its `sync()`: one `fsync` each) against
/// ``NaiveRewriteEventStore`` (the whole queue re-encoded and atomically rewritten per append).
///
/// The four stores are set up first and then appended to in finely interleaved rounds, so a burst
/// of disk traffic from other processes hits all of them alike. After each timed append the oldest item is
/// removed (untimed), so every length stays put.
struct EventQueueBenchmark {
    let options: BenchOptions
    let template: StorageTemplate

    /// One store at one length, and what was measured on it.
    private struct Subject {
        let length: Int
        let store: any EventQueueStore
        let directory: ScratchDirectory
        let perRound: Int
        var queue: [TrackedEvent.ID]
        var samples = Samples()
    }

    func run() async throws -> [Figure] {
        let rounds = options.pick(full: 12, quick: 2)
        let logger = Fixtures.logger()
        let long = template.queuedEvents
        var subjects = [
            try journal(length: 10, logger: logger), try naive(length: 10, perRound: 30),
            try journal(length: long, logger: logger), try naive(length: long, perRound: options.pick(full: 4, quick: 2)),
        ]
        defer { subjects.forEach { $0.directory.remove() } }
        var next = long
        // Finely interleaved: each step appends once to every store due in it, so a slow moment
        // of the disk (the naive store's own multi-megabyte writes included) hits them all alike.
        let steps = 30
        for _ in 0..<rounds {
            for step in 0..<steps {
                for index in subjects.indices {
                    let stride = steps / subjects[index].perRound
                    guard step % stride == 0, step / stride < subjects[index].perRound else { continue }
                    let ns = try timedAppend(subjects[index].store, &subjects[index].queue, index: &next)
                    subjects[index].samples.append(ns)
                }
            }
        }

        var figures: [Figure] = []
        for (id, journal, naive) in [("7a", subjects[0], subjects[1]), ("7b", subjects[2], subjects[3])] {
            let rate = 1e9 / journal.samples.median, naiveRate = 1e9 / naive.samples.median
            var figure = Figure(
                id: id, title: "durable appends at queue length \(Format.count(journal.length)) (FileEventQueueStore)",
                value: rate, unit: "per_second",
                display: "\(Format.rate(rate)) (\(Format.duration(ns: journal.samples.median))/append)",
                baseline: ("naive rewrite-the-file store", naiveRate, "\(Format.rate(naiveRate)) (\(Format.duration(ns: naive.samples.median)))"))
            figure.ratioMeaning = "journal appends per naive append (higher is better)"
            figure.details = [
                "journalAppends": Double(journal.samples.count), "naiveAppends": Double(naive.samples.count),
                "journalP90Ns": journal.samples.percentile(90), "naiveP90Ns": naive.samples.percentile(90),
            ]
            figures.append(figure)
        }
        let growth = subjects[2].samples.median / subjects[0].samples.median
        let naiveGrowth = subjects[3].samples.median / subjects[1].samples.median
        var scaling = Figure(
            id: "7c", title: "append time at length \(Format.count(long)) / at length 10", value: growth, unit: "ratio",
            display: Format.ratio(growth), baseline: ("for the naive store", naiveGrowth, Format.ratio(naiveGrowth)))
        scaling.ratio = nil  // the row is itself a ratio: 1 means the append cost does not grow with the queue
        figures.append(scaling)
        let preparation = Double(template.appendNs) / Double(max(template.queuedEvents, 1))
        figures[0].notes.append(
            "median per append over \(rounds) interleaved rounds; both stores fsync every append (scratch: \(options.scratch.path)); while preparing the template, \(Format.count(template.queuedEvents)) appends from an empty queue averaged \(Format.duration(ns: preparation)) each")
        figures[0].notes += Fixtures.notes(from: logger)
        return figures
    }

    /// A journal store at `length`: a copy of the template for the long queue, else a new one.
    private func journal(length: Int, logger: RecordingLogger) throws -> Subject {
        let directory = try length == template.queuedEvents
            ? template.copy(in: options.scratch, "queue") : Fixtures.directory(in: options.scratch, "queue")
        let store = FileEventQueueStore(directory: directory.url, logger: logger)
        var events = store.load()
        while events.count < length {
            let event = Fixtures.event(events.count, customer: template.customer)
            try store.append(event)
            events.append(event)
        }
        return Subject(length: length, store: store, directory: directory, perRound: 30, queue: events.map(\.id))
    }

    /// A naive store holding `length` events.
    private func naive(length: Int, perRound: Int) throws -> Subject {
        let directory = try Fixtures.directory(in: options.scratch, "naive")
        let events = (0..<length).map { Fixtures.event($0, customer: template.customer) }
        let store = try NaiveRewriteEventStore(directory: directory.url, events: events)
        return Subject(length: length, store: store, directory: directory, perRound: perRound, queue: events.map(\.id))
    }

    /// Appends one event (timed), then removes the oldest (untimed) to keep the length.
    private func timedAppend(_ store: any EventQueueStore, _ queue: inout [TrackedEvent.ID], index: inout Int) throws -> Double {
        let event = Fixtures.event(index, customer: template.customer)
        index += 1
        // Durable: the append and its sync (the journal's `sync()` is the group commit's fsync,
        // here paid per append; the naive store syncs inside `append` and does nothing here).
        let ns = try Stopwatch.time {
            try store.append(event)
            try store.sync()
        }
        queue.append(event.id)
        try store.remove(id: queue.removeFirst())
        return Double(ns)
    }
}
