// The `layout` feature's part of the build script: reads this crate's own sources with `syn`
// and writes a table of every `#[repr(C)]` struct and union (name, size, alignment, and each
// field's name, Rust type and offset, the numbers taken by the compiler with `size_of` and
// `offset_of!`), of every type alias, and of every integer, float and string constant, for
// bindings that build their own mirror of the C types (the Python wheel's ctypes classes).

use std::fmt::Write as _;
use std::fs;
use std::path::Path;

use quote::ToTokens;

fn sources(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in fs::read_dir(dir).expect("read src") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn ty(t: &syn::Type) -> String {
    t.to_token_stream().to_string().replace(' ', "")
}

fn is_pub(v: &syn::Visibility) -> bool {
    matches!(v, syn::Visibility::Public(_))
}

fn is_packed(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("repr") && a.to_token_stream().to_string().contains("packed"))
}

fn is_repr_c(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("repr") && a.to_token_stream().to_string().contains('C'))
}

const PRIMITIVES: &[&str] = &[
    "u8", "u16", "u32", "u64", "usize", "i8", "i16", "i32", "i64", "isize", "c_int", "c_uint",
    "c_char", "c_long", "c_ulong", "f32", "f64", "bool",
];

pub fn run(manifest: &Path, out_dir: &Path) {
    let mut files = Vec::new();
    sources(&manifest.join("src"), &mut files);
    files.sort();
    let mut structs = Vec::new();
    let mut aliases = Vec::new();
    let mut consts = Vec::new();
    for path in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        let text = fs::read_to_string(path).expect("read source");
        let Ok(file) = syn::parse_file(&text) else {
            continue;
        };
        for item in file.items {
            match item {
                syn::Item::Struct(s) if is_pub(&s.vis) && is_repr_c(&s.attrs) => {
                    if let syn::Fields::Named(f) = &s.fields {
                        let fields: Vec<(String, String)> = f
                            .named
                            .iter()
                            .map(|f| (f.ident.as_ref().unwrap().to_string(), ty(&f.ty)))
                            .collect();
                        structs.push((s.ident.to_string(), false, is_packed(&s.attrs), fields));
                    }
                }
                syn::Item::Union(u) if is_pub(&u.vis) && is_repr_c(&u.attrs) => {
                    let fields = u
                        .fields
                        .named
                        .iter()
                        .map(|f| (f.ident.as_ref().unwrap().to_string(), ty(&f.ty)))
                        .collect();
                    structs.push((u.ident.to_string(), true, is_packed(&u.attrs), fields));
                }
                syn::Item::Type(t) if is_pub(&t.vis) && t.generics.params.is_empty() => {
                    aliases.push((t.ident.to_string(), ty(&t.ty)));
                }
                syn::Item::Const(c) if is_pub(&c.vis) => {
                    consts.push((c.ident.to_string(), ty(&c.ty)));
                }
                // `versioned_struct!(TYPE, NAME_versionN = N, ...)` declares the version word.
                syn::Item::Macro(m)
                    if m.mac
                        .path
                        .segments
                        .last()
                        .is_some_and(|s| s.ident == "versioned_struct") =>
                {
                    let tokens = m.mac.tokens.to_string();
                    if let Some(name) = tokens
                        .split(',')
                        .nth(1)
                        .and_then(|p| p.split('=').next())
                        .map(str::trim)
                    {
                        consts.push((name.to_string(), "u32".to_string()));
                    }
                }
                _ => {}
            }
        }
    }
    let alias_of: std::collections::HashMap<&str, &str> = aliases
        .iter()
        .map(|(a, t)| (a.as_str(), t.as_str()))
        .collect();
    let resolve = |t: &str| -> String {
        let mut t = t.to_string();
        for _ in 0..8 {
            match alias_of.get(t.as_str()) {
                Some(next) => t = next.to_string(),
                None => break,
            }
        }
        t
    };

    let mut code = String::new();
    code.push_str("/// Every `#[repr(C)]` struct and union of this crate.\npub static STRUCT_LAYOUTS: &[StructLayout] = &[\n");
    for (name, union, packed, fields) in &structs {
        let _ = write!(
            code,
            "    StructLayout {{ name: {name:?}, union: {union}, packed: {packed}, size: ::core::mem::size_of::<crate::{name}>(), align: ::core::mem::align_of::<crate::{name}>(), fields: &["
        );
        for (f, t) in fields {
            let _ = write!(
                code,
                "FieldLayout {{ name: {f:?}, ty: {t:?}, offset: ::core::mem::offset_of!(crate::{name}, {f}) }}, "
            );
        }
        code.push_str("] },\n");
    }
    code.push_str("];\n\n/// Every public type alias of this crate: `(name, the aliased Rust type)`.\npub static TYPE_ALIASES: &[(&str, &str)] = &[\n");
    for (a, t) in &aliases {
        let _ = writeln!(code, "    ({a:?}, {t:?}),");
    }
    code.push_str("];\n\n/// Every public integer, float and string constant of this crate.\npub static CONSTANTS: &[(&str, ConstValue)] = &[\n");
    for (c, t) in &consts {
        let r = resolve(t);
        let value = if r == "f64" || r == "f32" {
            format!("ConstValue::Float(crate::{c} as f64)")
        } else if r == "&str" || r == "&'staticstr" {
            format!("ConstValue::Str(crate::{c})")
        } else if PRIMITIVES.contains(&r.as_str()) && r != "bool" {
            format!("ConstValue::Int(crate::{c} as i128)")
        } else {
            continue;
        };
        let _ = writeln!(code, "    ({c:?}, {value}),");
    }
    code.push_str("];\n");
    fs::write(out_dir.join("layout_table.rs"), code).expect("write layout_table.rs");
}
