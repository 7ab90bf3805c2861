// Benchmarks for the geo index (not timed tests): open time, single-lookup latency, in-process
// throughput on one core and private memory. Also writes point sets for the batch and peer runs.
//
//   geoindex-bench lookup INDEX [--points N] [--set uniform|land|populated|track] [--places cities.txt]
//   geoindex-bench points N [--set uniform|land|populated] [--places cities.txt] [--seed S] [--index FILE]
#if canImport(Glibc)
import Glibc
#endif
import GeoIndex

struct Generator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return state
    }

    mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }
}

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) * 1e-9
}

func fail(_ message: String) -> Never {
    let text = Array("geoindex-bench: \(message)\n".utf8)
    _ = text.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
    exit(2)
}

func option(_ name: String, _ arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

/// Coordinates of GeoNames places (columns 5 and 6 of the cities TSV).
func placeCoordinates(_ path: String) -> [(Double, Double)] {
    guard let file = fopen(path, "r") else { fail("cannot read \(path); run scripts/fetch-geodata.sh") }
    defer { fclose(file) }
    var result: [(Double, Double)] = []
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    while getline(&line, &capacity, file) > 0 {
        guard let line else { break }
        let fields = String(decoding: UnsafeBufferPointer(start: line, count: strlen(line)).map { UInt8(bitPattern: $0) }, as: UTF8.self).split(separator: "\t", omittingEmptySubsequences: false)
        if fields.count > 5, let lat = Double(fields[4]), let lon = Double(fields[5]) { result.append((lat, lon)) }
    }
    free(line)
    return result
}

/// Uniform on the sphere; uniform on land (uniform points the index puts in a country);
/// GeoNames places jittered by up to ~20 km (where devices are, and the densest data); or tracks
/// of consecutive nearby fixes (a device's real pattern: the data it needs stays in cache).
func points(count: Int, set: String, places: String, seed: UInt64, index: String? = nil) -> [(Double, Double)] {
    var random = Generator(state: seed | 1)
    if set == "land" {
        guard let index, let reader = try? GeoIndexReader(path: index) else { fail("--set land needs --index FILE") }
        var result: [(Double, Double)] = []
        while result.count < count {
            let point = (asin(2 * random.unit() - 1) * 180 / Double.pi, random.unit() * 360 - 180)
            if reader.place(latitude: point.0, longitude: point.1).countryCode != nil { result.append(point) }
        }
        return result
    }
    if set == "uniform" {
        return (0..<count).map { _ in
            (asin(2 * random.unit() - 1) * 180 / Double.pi, random.unit() * 360 - 180)
        }
    }
    let anchors = placeCoordinates(places)
    guard !anchors.isEmpty else { fail("no places in \(places)") }
    if set == "track" {
        // Like a moving device: 1,000 fixes ~15 m apart from a random place, then another place.
        var result: [(Double, Double)] = []
        var position = (0.0, 0.0)
        var heading = 0.0
        while result.count < count {
            if result.count % 1000 == 0 {
                position = anchors[Int(random.next() % UInt64(anchors.count))]
                heading = random.unit() * 2 * Double.pi
            }
            heading += (random.unit() - 0.5) * 0.3
            position.0 = min(max(position.0 + cos(heading) * 15 / 110_574, -90), 90)
            position.1 += sin(heading) * 15 / (111_320 * max(cos(position.0 * Double.pi / 180), 0.01))
            if position.1 > 180 { position.1 -= 360 } else if position.1 < -180 { position.1 += 360 }
            result.append(position)
        }
        return result
    }
    return (0..<count).map { _ in
        let anchor = anchors[Int(random.next() % UInt64(anchors.count))]
        let lat = min(max(anchor.0 + (random.unit() - 0.5) * 0.36, -90), 90)
        var lon = anchor.1 + (random.unit() - 0.5) * 0.36
        if lon > 180 { lon -= 360 } else if lon < -180 { lon += 360 }
        return (lat, lon)
    }
}

/// Anonymous (non-file-backed) and resident memory of this process in kB.
func memory() -> (anonymous: Int, resident: Int) {
    guard let file = fopen("/proc/self/smaps_rollup", "r") else { return (-1, -1) }
    defer { fclose(file) }
    var anonymous = -1, resident = -1
    var buffer = [CChar](repeating: 0, count: 256)
    while fgets(&buffer, 256, file) != nil {
        let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let value = Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
        if line.hasPrefix("Anonymous:") { anonymous = value }
        if line.hasPrefix("Rss:") { resident = value }
    }
    return (anonymous, resident)
}

func runLookup(_ arguments: [String]) {
    guard arguments.count >= 1 else { fail("usage: geoindex-bench lookup INDEX [--points N] [--set uniform|populated]") }
    let path = arguments[0]
    let count = Int(option("--points", arguments) ?? "") ?? 100_000
    let set = option("--set", arguments) ?? "populated"
    let places = option("--places", arguments) ?? "cache/geodata/out/cities.txt"
    let workload = points(count: count, set: set, places: places, seed: 42, index: path)
    let before = memory()

    var opens: [Double] = []
    for _ in 0..<21 {
        let start = now()
        do {
            _ = try GeoIndexReader(path: path)
        } catch {
            fail("\(error)")
        }
        opens.append(now() - start)
    }
    opens.sort()
    let reader: GeoIndexReader
    do {
        reader = try GeoIndexReader(path: path)
    } catch {
        fail("\(error)")
    }

    // Warm the mapping once so latency reflects lookups, not first-touch page faults.
    var checksum = 0
    for (lat, lon) in workload { checksum &+= reader.place(latitude: lat, longitude: lon).countryCode?.utf8.count ?? 0 }

    var latencies: [Double] = []
    latencies.reserveCapacity(workload.count)
    var found = 0
    for (lat, lon) in workload {
        let start = now()
        let place = reader.place(latitude: lat, longitude: lon)
        latencies.append(now() - start)
        if place.countryCode != nil { found += 1 }
    }
    latencies.sort()
    let after = memory()

    let rounds = max(1, 1_000_000 / workload.count)
    let start = now()
    for _ in 0..<rounds {
        for (lat, lon) in workload { checksum &+= reader.place(latitude: lat, longitude: lon).localityName?.utf8.count ?? 0 }
    }
    let elapsed = now() - start
    let total = rounds * workload.count

    func micro(_ seconds: Double) -> String { String(Double(Int(seconds * 1e8)) / 100) }
    print("index: \(path)")
    print("points: \(workload.count) \(set) (\(found) with a country)")
    print("open: min \(micro(opens[0])) us, median \(micro(opens[10])) us, max \(micro(opens[20])) us (21 opens)")
    print("lookup latency: p50 \(micro(latencies[latencies.count / 2])) us, p99 \(micro(latencies[latencies.count * 99 / 100])) us, max \(micro(latencies[latencies.count - 1])) us")
    print("throughput: \(Int(Double(total) / elapsed)) lookups/s on one thread (\(total) lookups in \(micro(elapsed)) us) [\(checksum % 7)]")
    print("memory: anonymous \(before.anonymous) kB before open -> \(after.anonymous) kB after \(workload.count) lookups (+\(after.anonymous - before.anonymous) kB); RSS \(after.resident) kB")
}

func runPoints(_ arguments: [String]) {
    let count = Int(arguments.first ?? "") ?? 100_000
    let set = option("--set", arguments) ?? "populated"
    let places = option("--places", arguments) ?? "cache/geodata/out/cities.txt"
    let seed = UInt64(option("--seed", arguments) ?? "") ?? 7
    var out = ""
    for (lat, lon) in points(count: count, set: set, places: places, seed: seed, index: option("--index", arguments)) {
        out += "\(Double(Int(lat * 1e6)) / 1e6),\(Double(Int(lon * 1e6)) / 1e6)\n"
        if out.utf8.count > 1 << 16 {
            emit(out)
            out = ""
        }
    }
    emit(out)
}

func emit(_ text: String) {
    let bytes = Array(text.utf8)
    var done = 0
    while done < bytes.count {
        let n = bytes.withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress.map { $0 + done }, bytes.count - done) }
        if n <= 0 { fail("cannot write the points") }
        done += n
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
switch arguments.first {
case "lookup": runLookup(Array(arguments.dropFirst()))
case "points": runPoints(Array(arguments.dropFirst()))
default: fail("usage: geoindex-bench lookup INDEX [--points N] [--set uniform|populated] | points N [--set ...] [--seed S]")
}
