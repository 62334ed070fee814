# Ruby reference for bench_graph_reference.py: every call site, resolved by TypeProf.
#
# Usage: ruby ref_ruby_typeprof.rb ROOT < files (one relative path a line)
#
# TypeProf 0.21 (the type profiler that Ruby 3.1 bundles, in Debian's libruby3.1)
# runs an abstract interpretation of the files together: every method is entered,
# called from the code that calls it or, where nothing does, with untyped
# arguments, and each send dispatches on the receiver's inferred type. Each
# `send` instruction it compiles keeps the Ruby-defined methods it dispatched to
# (ISeq#add_called_iseq, the table behind its `textDocument/definition`); a
# dispatch to a method defined in RBS (the core and standard library) or to one
# of TypeProf's built-ins is seen here by wrapping their do_send.
#
# A site's targets:
#   - the project's methods the send ran (its Ruby-defined callees); for a `new`
#     (`Foo.new`, a bare `new` in a class method, `self.class.new`), also the class
#     TypeProf's Class#new constructed (the class and the `initialize` that runs,
#     as the harness counts constructions);
#   - [] when it only ran methods of the core or standard library ("resolved
#     outside the project");
#   - null when TypeProf dispatched nothing (an untyped receiver) or only an
#     attribute reader or writer (attr_*: no definition to point at): nobody's
#     answer.
# Sites are the sends of methods named like identifiers (`foo`, `x.bar?`,
# `Y.baz!`), with or without a receiver, setters (`x.y = 1` sends `y=`) and
# `super`; operators and `[]` are not calls a reader asks `callers` about. ``caller``
# is the innermost method, class or module around the site (a block's calls are
# its method's); null at file level. Prints {"tool", "sites"} in the harness's
# common format (see ref_python_jedi.py).

require "json"
require "stringio"
require "typeprof"

ROOT = File.expand_path(ARGV.fetch(0))
FILES = $stdin.read.split("\n").reject(&:empty?)

# Before analysis TypeProf fuses a send with the branch on its result (`if x.ok?`,
# `unless include?(y)`) into one instruction at the branch's position, which keeps no
# code range: the fused instruction is given the send's, so that what it dispatches to
# is recorded for the send's site. ``sites`` is each send with the position it runs at.
FUSED = %i[send_branch recv_getlocal_send_branch arg_getlocal_send_branch].freeze

module Collect
  ALL = []
  def initialize(*args)
    super
    ALL << self
  end

  def unify_instructions
    before = @insns.dup
    super
    @sites = []
    before.each_with_index do |insn, pc|
      next unless %i[send invokesuper].include?(insn.insn)
      if @insns[pc].equal?(insn)
        @sites << [insn, pc]
      elsif (fused = @insns[pc + 1]) && FUSED.include?(fused.insn)
        fused.code_range = insn.code_range
        fused.definitions = insn.definitions
        @sites << [insn, pc + 1]
      end
    end
  end

  attr_reader :sites
end
TypeProf::ISeq.prepend(Collect)

# [iseq object_id, pc] of each send that dispatched outside the Ruby sources.
OUTSIDE = {}

def site_key(ep)
  ctx = ep&.ctx
  iseq = ctx.respond_to?(:iseq) ? ctx.iseq : nil
  iseq && [iseq.object_id, ep.pc]
end

module MarkOutside
  def do_send(recv, mid, aargs, caller_ep, caller_env, scratch, &ctn)
    key = site_key(caller_ep)
    OUTSIDE[key] = true if key
    super
  end
end
# The classes each `new` constructs (TypeProf's Class#new, Builtin.object_s_new), by
# their full names: `Foo.new`, a bare `new` in a class method, `self.class.new`.
CONSTRUCTED = Hash.new { |h, k| h[k] = [] }
module MarkConstructed
  def object_s_new(recv, mid, aargs, ep, env, scratch, &ctn)
    key = site_key(ep)
    if key && recv.is_a?(TypeProf::Type::Class)
      CONSTRUCTED[key] |= [scratch.instance_variable_get(:@class_defs)[recv.idx].name.join("::")]
    end
    super
  end
end
TypeProf::Builtin.singleton_class.prepend(MarkConstructed)
TypeProf::TypedMethodDef.prepend(MarkOutside)
TypeProf::CustomMethodDef.prepend(MarkOutside)

errors = 0
roots = []
FILES.each do |rel|
  begin
    iseq, = TypeProf::ISeq.compile(File.join(ROOT, rel))
    roots << iseq
  rescue SyntaxError, StandardError
    errors += 1
  end
end

config = TypeProf::ConfigData.new(
  rb_files: roots, rbs_files: [], output: StringIO.new, gem_rbs_features: [], verbose: 0,
  max_sec: nil, options: { show_errors: false, stub_execution: true, show_indicator: false })
TypeProf.analyze(config)

def relative(path)
  full = File.expand_path(path)
  full.start_with?(ROOT + "/") ? full[(ROOT.size + 1)..] : nil
end

SCOPE_NAME = /\A<(?:class|module):(\w+)>\z/

# Named scopes per file: [first line, last line, name, first line] of methods, classes
# and modules.
scopes = Hash.new { |h, k| h[k] = [] }
Collect::ALL.each do |iseq|
  rel = relative(iseq.path)
  next unless rel
  range = iseq.iseq_code_range
  name = case iseq.type
         when :method then iseq.name.to_s
         when :class then iseq.name.to_s[SCOPE_NAME, 1]
         end
  scopes[rel] << [range.first.lineno, range.last.lineno, name] if name
end

def caller_of(scopes, rel, line)
  inner = scopes[rel].select { |first, last, _| first <= line && line <= last }
                     .max_by { |first, last, _| [first, -last] }
  inner && { file: rel, name: inner[2], line: inner[0] }
end

def target(path, range, name)
  rel = relative(path)
  rel && { file: rel, name: name, line: range.first.lineno }
end

# Method iseqs by [path, first line, first column]: a definition's code range names
# its iseq.
methods = {}
Collect::ALL.each do |iseq|
  next unless iseq.type == :method
  range = iseq.iseq_code_range
  methods[[iseq.path, range.first.lineno, range.first.column]] = iseq.name.to_s
end

# Classes and modules by full name (the lexical nesting of their bodies, and the
# written `class A::B`): [file, line of the `class` keyword], one per definition.
classes_by_name = Hash.new { |h, k| h[k] = [] }
bodies = Collect::ALL.select { |iseq| iseq.type == :class && relative(iseq.path) }
bodies.each do |iseq|
  range = iseq.iseq_code_range
  # (a file TypeProf's `require` reads again is compiled twice: bodies at the same
  # lines are one body)
  outer = bodies.select do |other|
    other.path == iseq.path &&
      other.iseq_code_range.first.lineno < range.first.lineno &&
      range.last.lineno <= other.iseq_code_range.last.lineno
  end.uniq { |o| o.iseq_code_range.first.lineno }
  text = File.readlines(iseq.path)[range.first.lineno - 1].to_s
  written = text[/\b(?:class|module)\s+((?:::)?[A-Z][\w:]*)/, 1]
  next unless written
  names = outer.sort_by { |o| o.iseq_code_range.first.lineno }.map do |o|
    File.readlines(o.path)[o.iseq_code_range.first.lineno - 1].to_s[
      /\b(?:class|module)\s+((?:::)?[A-Z][\w:]*)/, 1]
  end
  full = written.start_with?("::") ? written[2..] : [*names.compact, written].join("::")
  classes_by_name[full] |= [[relative(iseq.path), range.first.lineno]]
end

# A reopened class is one class; its definition is the one in the file named after
# it (ctxkit's reading too), else the first.
def class_target(classes_by_name, full)
  found = classes_by_name[full]
  return nil if found.empty?
  short = full.split("::").last
  snake = short.gsub(/(?<!^)(?=[A-Z])/, "_").downcase
  file, line = found.min_by { |f, l| [File.basename(f, ".rb") == snake ? 0 : 1, f, l] }
  { file: file, name: short, line: line }
end

CALL_NAME = /\A[A-Za-z_]\w*[?!=]?\z/
sites = []
Collect::ALL.each do |iseq|
  rel = relative(iseq.path)
  next unless rel
  (iseq.sites || []).each do |insn, pc|
    next unless insn.code_range
    mid = insn.operands[0].is_a?(Hash) ? insn.operands[0][:mid] : nil
    name = insn.insn == :invokesuper ? "super" : mid.to_s
    next unless name == "super" || CALL_NAME.match?(name)
    key = [iseq.object_id, pc]
    line = insn.code_range.first.lineno
    found = (insn.definitions || []).filter_map do |path, range|
      callee = methods[[path, range.first.lineno, range.first.column]]
      callee && target(path, range, callee)
    end
    found = found.uniq
    if name == "new"
      # the class constructed, as well as the `initialize` that runs
      classes = CONSTRUCTED[key].filter_map { |full| class_target(classes_by_name, full) }
      found = (classes + found).uniq
    end
    targets = if !found.empty? then found
              elsif OUTSIDE[key] then []
              end
    sites << { file: rel, line: line, name: name, caller: caller_of(scopes, rel, line),
               targets: targets }
  end
end

tool = "TypeProf #{TypeProf::VERSION} (Ruby #{RUBY_VERSION})"
puts JSON.generate({ tool: tool, sites: sites,
                     errors: errors.zero? ? nil : { errors: errors, "units with errors" => errors,
                                                    units: FILES.size } })
