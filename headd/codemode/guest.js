// What a code-mode script runs beside, evaluated in a fresh QuickJS context before the script.
//
// It builds the two modules a script may import (`/workspace/lib/corpus.mjs` and `node:fs`),
// `console`, and a `fetch` that refuses, over the host functions the worker installs as
// `__host_*`; those are captured here and removed from the global object, so the script reaches
// the host only through these functions, each of which answers a value or an error code and
// never a host object. The helper's semantics are the seed's (`corpus.mjs`): root-absolute
// paths, `index.html` and `.git` skipped, `article mark` as the claim, a cycle guard in `chain`,
// `edges` split into resolved and dangling. The corpus itself comes prebuilt from the head.
;(() => {
  "use strict"
  const host = {
    fs: globalThis.__host_fs,
    out: globalThis.__host_out,
    corpus: globalThis.__host_corpus,
    memory: globalThis.__host_memory,
    query: globalThis.__host_query,
  }
  for (const name of Object.keys(host)) delete globalThis[`__host_${name}`]
  const ROOT = "/mnt/memhtml"
  // A string handed to the host must be flat: the engine joins long strings lazily (a rope),
  // and a rope is a value its Python binding cannot read.
  const flat = (value) => String(value).slice(0)
  // What the prelude itself uses, taken before the script can replace it: a script that
  // tampers with JSON or Array.prototype breaks its own code, not its console or its fs.
  const parse = JSON.parse
  const stringify = JSON.stringify
  const joined = (values, separator) => {
    let text = ""
    for (let i = 0; i < values.length; i++) text += (i === 0 ? "" : separator) + show(values[i])
    return text
  }

  // -- console ------------------------------------------------------------------------------
  const show = (value) => {
    if (typeof value === "string") return value
    if (value instanceof Error) return value.stack ? `${value}\n${value.stack}` : String(value)
    try {
      const text = stringify(value)
      return text === undefined ? String(value) : text
    } catch {
      return String(value)
    }
  }
  const writer = (stream) => (...values) => {
    if (host.out(stream, flat(joined(values, " ") + "\n")) !== "") {
      throw new RangeError(`${stream} exceeds the code-mode output limit`)
    }
  }
  const console = Object.freeze({
    log: writer("stdout"),
    info: writer("stdout"),
    debug: writer("stdout"),
    error: writer("stderr"),
    warn: writer("stderr"),
  })

  // -- node:fs, read-only over the commit's tree --------------------------------------------
  const fsError = (code, syscall, path) => {
    const words = {
      ENOENT: "no such file or directory",
      EISDIR: "illegal operation on a directory",
      ENOTDIR: "not a directory",
      EROFS: "read-only file system",
      EINVAL: "invalid argument",
    }
    const error = new Error(`${code}: ${words[code] ?? "error"}, ${syscall} '${path}'`)
    error.code = code
    error.syscall = syscall
    error.path = path
    return error
  }
  const ask = (op, path, syscall) => {
    const answer = parse(host.fs(op, flat(path)))
    if (answer.error !== undefined) throw fsError(answer.error, syscall, String(path))
    return answer.value
  }
  const encodingOf = (options) =>
    typeof options === "string" ? options : (options && options.encoding) || null
  const bytesOf = (latin1) => {
    const bytes = new Uint8Array(latin1.length)
    for (let i = 0; i < latin1.length; i++) bytes[i] = latin1.charCodeAt(i)
    return bytes
  }
  const statOf = (kind, size) => {
    const directory = kind === "dir"
    return Object.freeze({
      size,
      mode: directory ? 0o40555 : 0o100444,
      isDirectory: () => directory,
      isFile: () => !directory,
      isSymbolicLink: () => false,
    })
  }
  const readOnly = (syscall) => (path) => {
    throw fsError("EROFS", syscall, String(path))
  }
  const fs = {
    readFileSync(path, options) {
      const encoding = encodingOf(options)
      if (encoding === null) return bytesOf(ask("read-bytes", path, "open"))
      if (!/^utf-?8$/i.test(encoding)) throw fsError("EINVAL", "open", String(path))
      return ask("read", path, "open")
    },
    readdirSync(path) {
      return ask("list", path, "scandir")
    },
    statSync(path) {
      const [kind, size] = ask("stat", path, "stat")
      return statOf(kind, size)
    },
    lstatSync(path) {
      return fs.statSync(path)
    },
    existsSync(path) {
      return parse(host.fs("stat", flat(path))).error === undefined
    },
    writeFileSync: readOnly("open"),
    appendFileSync: readOnly("open"),
    mkdirSync: readOnly("mkdir"),
    rmSync: readOnly("rm"),
    rmdirSync: readOnly("rmdir"),
    unlinkSync: readOnly("unlink"),
    renameSync: readOnly("rename"),
    copyFileSync: readOnly("copyfile"),
    symlinkSync: readOnly("symlink"),
    chmodSync: readOnly("chmod"),
    openSync(path, flags) {
      if (flags !== undefined && flags !== "r") throw fsError("EROFS", "open", String(path))
      throw fsError("EINVAL", "open", String(path))
    },
  }
  fs.default = fs
  Object.freeze(fs)

  // -- the document escape hatch: CSS selectors answered by the host's parse ------------------
  class Element {
    constructor(file, node) {
      this._file = file
      this._id = node.id
      this.rawTagName = node.tag
      this.tagName = node.tag.toUpperCase()
      this.attributes = node.attributes
      this.text = node.text
      this.textContent = node.text
      this.innerText = node.text
      this.rawText = node.text
      this.innerHTML = node.inner
      this.outerHTML = node.outer
    }
    getAttribute(name) {
      const value = this.attributes[String(name).toLowerCase()]
      return value === undefined ? null : value
    }
    hasAttribute(name) {
      return String(name).toLowerCase() in this.attributes
    }
    querySelectorAll(selector) {
      return select(this._file, this._id, "all", selector)
    }
    querySelector(selector) {
      return select(this._file, this._id, "first", selector)[0] ?? null
    }
    get nextElementSibling() {
      return select(this._file, this._id, "next", "")[0] ?? null
    }
    get parentNode() {
      return select(this._file, this._id, "parent", "")[0] ?? null
    }
    get children() {
      return select(this._file, this._id, "children", "")
    }
    get childNodes() {
      return this.children
    }
    toString() {
      return this.outerHTML
    }
  }
  const select = (file, id, how, selector) => {
    const answer = parse(host.query(flat(file), id, how, flat(selector)))
    if (answer.error !== undefined) {
      if (answer.error === "ENOENT") throw fsError("ENOENT", "open", file)
      throw new SyntaxError(`'${selector}' is not a valid selector: ${answer.error}`)
    }
    return answer.value.map((node) => new Element(file, node))
  }
  const documentOf = (file) => new Element(file, { id: 0, tag: "#document", attributes: {} })

  // -- /workspace/lib/corpus.mjs -------------------------------------------------------------
  const idFor = (path, root) => (path.startsWith(`${root}/`) ? path.slice(root.length) : path)
  // `document` is a getter on one shared prototype rather than a property of each memory:
  // setting a prototype on a parsed object costs a tenth of copying it to add a property, and a
  // census of 10,000 memories spends most of its time here.
  const documents = new Map()
  const MemoryFields = Object.freeze(
    Object.create(Object.prototype, {
      document: {
        get() {
          let document = documents.get(this.file)
          if (document === undefined) documents.set(this.file, (document = documentOf(this.file)))
          return document
        },
      },
    }),
  )
  const memoryOf = (memory) => Object.setPrototypeOf(memory, MemoryFields)
  const isDirectory = (path) => fs.statSync(path).isDirectory()
  const walk = (dir = ROOT, found = []) => {
    for (const entry of fs.readdirSync(dir)) {
      if (entry === ".git") continue
      const path = `${dir}/${entry}`
      if (isDirectory(path)) walk(path, found)
      else if (path.endsWith(".html") && entry !== "index.html") found.push(path)
    }
    return found
  }
  const memoryAt = (path, root = ROOT) => {
    const fields = parse(host.memory(flat(path)))
    if (fields.error !== undefined) throw fsError(fields.error, "open", String(path))
    return memoryOf({ path: idFor(String(path), root), file: String(path), ...fields.value })
  }
  const corpus = (root = ROOT) => {
    if (root !== ROOT) {
      const byPath = new Map()
      for (const path of walk(root)) {
        const memory = memoryAt(path, root)
        byPath.set(memory.path, memory)
      }
      return byPath
    }
    const byPath = new Map()
    for (const memory of parse(host.corpus())) byPath.set(memory.path, memoryOf(memory))
    return byPath
  }
  const backlinks = (memories) => {
    const incoming = new Map()
    for (const memory of memories.values()) {
      for (const link of memory.links) {
        const from = { from: memory.path, rel: link.rel }
        const list = incoming.get(link.href)
        if (list === undefined) incoming.set(link.href, [from])
        else list.push(from)
      }
    }
    return incoming
  }
  const chain = (memories, start, rel) => {
    const travelled = []
    for (let at = start; at !== undefined && at !== null && !travelled.includes(at); ) {
      travelled.push(at)
      at = memories.get(at)?.links.find((link) => link.rel === rel)?.href
    }
    return travelled
  }
  const edges = (memories) => {
    const resolved = []
    const dangling = []
    for (const memory of memories.values()) {
      for (const link of memory.links) {
        const edge = { from: memory.path, rel: link.rel, href: link.href }
        ;(memories.has(link.href) ? resolved : dangling).push(edge)
      }
    }
    return { resolved, dangling }
  }
  const helper = Object.freeze({ ROOT, walk, memoryAt, corpus, backlinks, chain, edges })

  const fetch = () => Promise.reject(new TypeError("fetch is disabled: code-mode has no network"))
  const modules = Object.freeze({
    "/workspace/lib/corpus.mjs": helper,
    "node:fs": fs,
    fs: fs,
  })
  const define = (name, value) =>
    Object.defineProperty(globalThis, name, { value, writable: false, configurable: false })
  define("__modules", modules)
  define("console", console)
  define("fetch", fetch)
  delete globalThis.performance
})()
