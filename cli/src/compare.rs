//! `atome compare`: the q15 integer mode against the float path on a text
//! (docs/Q15.md's quality figures: cross-entropy, argmax agreement, greedy
//! generation), both modes from the library in one process.
use crate::args::CompareArgs;
use crate::container_io::{config_or, read_model};
use crate::engine::{Dtype, Engine, Mode, Plan};
use crate::{load, read_blob, Loaded};
use std::time::Instant;

const F32_CACHED: Mode = Mode { dtype: Dtype::F32, plan: Plan::Cached };
const Q15_LEAN: Mode = Mode { dtype: Dtype::Q15, plan: Plan::Lean };

/// Mean next-token cross-entropy (nats), in binary64.
fn xent(logits: &[Vec<f32>], targets: &[i32]) -> f64 {
    let mut sum = 0.0;
    for (l, &t) in logits.iter().zip(targets) {
        let m = l.iter().fold(f64::NEG_INFINITY, |a, &x| a.max(x as f64));
        let lse = l.iter().map(|&x| (x as f64 - m).exp()).sum::<f64>().ln();
        sum += lse - (l[t as usize] as f64 - m);
    }
    sum / logits.len() as f64
}

/// Index of the first largest value.
fn argmax(v: &[f32]) -> usize {
    let mut b = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[b] {
            b = i;
        }
    }
    b
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut ab, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (x as f64, y as f64);
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    ab / (aa.sqrt() * bb.sqrt())
}

pub fn cmd_compare(a: &CompareArgs) -> Result<(), String> {
    let (path, b, boxed) = read_model(&a.model.blob)?;
    let (_, dims, how, loaded) = load(&b, &a.model, config_or(a.model.config.config, &boxed))?;
    let model = match loaded {
        Loaded::Lm(m) => m,
        Loaded::Clf(_) => return Err("compare needs a language-model blob, not a classifier".into()),
    };
    let (tname, text) = read_blob(&a.text)?;
    let t = a.window;
    let toks: Vec<i32> = text.iter().map(|&x| x as i32 % dims.vocab as i32).collect();
    let offs: Vec<usize> = (0..a.windows).map(|i| i * a.stride).filter(|&o| o + t < toks.len()).collect();
    if offs.is_empty() {
        return Err(format!("{tname}: shorter than one window of {t} bytes plus its target"));
    }
    outln!("blob {path}: {} ({how}); text {tname}: {} bytes", crate::blob::dims_long(&dims), toks.len());

    let mut fe = Engine::new(dims, t, F32_CACHED);
    let mut qe = Engine::new(dims, t, Q15_LEAN);
    let (mut lf, mut lq, mut tg) = (Vec::new(), Vec::new(), Vec::new());
    let (mut tf, mut tq) = (0.0f64, 0.0f64);
    for &o in &offs {
        for p in 1..=t {
            let pre = &toks[o..o + p];
            let t0 = Instant::now();
            fe.predict(&model, pre).ok_or("float predict failed")?;
            tf += t0.elapsed().as_secs_f64();
            lf.push(fe.logits.clone());
            let t0 = Instant::now();
            qe.predict(&model, pre).ok_or("q15 predict failed")?;
            lq.push(qe.logits.clone());
            tq += t0.elapsed().as_secs_f64();
            tg.push(toks[o + p]);
        }
    }
    let n = lf.len();
    let (cf, cq) = (xent(&lf, &tg), xent(&lq, &tg));
    let agree = lf.iter().zip(&lq).filter(|(f, q)| argmax(f) == argmax(q)).count();
    let cos: Vec<f64> = lf.iter().zip(&lq).map(|(f, q)| cosine(f, q)).collect();
    let cmin = cos.iter().cloned().fold(f64::INFINITY, f64::min);
    outln!("windows {} x {t} bytes every {} bytes: {n} positions scored", offs.len(), a.stride);
    outln!("cross-entropy float {cf:.5}  q15 {cq:.5}  relative {:+.3}%", 100.0 * (cq / cf - 1.0));
    outln!("argmax agreement {agree}/{n} = {:.2}%", 100.0 * agree as f64 / n as f64);
    outln!("logit cosine mean {:.6}  min {cmin:.6}", cos.iter().sum::<f64>() / n as f64);
    outln!("(float cached {tf:.1} s, q15 lean {tq:.1} s, predict on every prefix)");

    let pl = a.prompt_len;
    let (mut eq_all, mut full) = (0, 0);
    let mut per = Vec::new();
    for i in 0..a.prompts {
        let o = offs[(i * offs.len()) / a.prompts] + 1000;
        let Some(prompt) = toks.get(o..o + pl) else { continue };
        let s = pl + a.gen;
        let mut gf = vec![0i32; a.gen];
        let mut f = Engine::new(dims, s, F32_CACHED);
        let nf = f.generate(&model, prompt, &mut gf).ok_or("float generate failed")?;
        let mut q = Engine::new(dims, s, Q15_LEAN);
        let mut gq = vec![0i32; a.gen];
        let nq = q.generate(&model, prompt, &mut gq).ok_or("q15 generate failed")?;
        let (gf, gq) = (&gf[..nf], &gq[..nq]);
        let same = gf.iter().zip(gq).filter(|(x, y)| x == y).count();
        let pre = gf.iter().zip(gq).take_while(|(x, y)| x == y).count();
        outln!("prompt {i} (offset {o}): {same}/{} tokens equal, common prefix {pre}", gf.len());
        eq_all += same;
        full += usize::from(same == a.gen && nq == a.gen);
        per.push(same.to_string());
    }
    outln!("greedy: equal tokens {eq_all}/{}, per prompt [{}]; prompts fully equal {full}/{}", a.gen * per.len(), per.join(", "), per.len());
    Ok(())
}
