//! The safe region, drawn: for each boundary family the parameter synthesis settles, a page
//! that plots where the property is proved to hold and where a run breaks it, over two of the
//! family's keys with the others fixed and adjustable, the inequality written beside it and
//! the family's two catalog files marked as points that open their pages (the counterexample
//! on one side, the holding run on the other).
//!
//! Every cell is the synthesis's own result, evaluated in the page: the regions where the
//! property breaks (conjunctions of linear inequalities over the keys) and the domain they
//! speak for are written into the page as numbers, and a few lines of script colour each whole
//! point. Nothing is sampled and nothing is fetched.

use std::fmt::Write;
use std::time::Instant;

use anyhow::{Context, Result};
use redlock_lab::catalog;
use redlock_lab::check::{Inequality, Synthesis};
use redlock_lab::property::Property;
use redlock_lab::sweep::{key_symbol, synthesize_keys, written_number};

use super::html::{escape, page};

/// Zones one family's synthesis may explore.
const LIMIT: usize = 2_000_000;

/// One boundary family: a catalog file whose keys are left free, and its two sides.
pub(super) struct Family {
    /// The page's name (`region-drift.html`).
    pub name: &'static str,
    /// What it shows, as the index and the page's title say it.
    pub title: &'static str,
    /// The catalog file the synthesis runs on, with `keys` free.
    file: &'static str,
    /// The keys left free; the first two are the axes shown first (across, then up).
    keys: &'static [&'static str],
    /// The property plotted.
    property: Property,
    /// The catalog files on either side of the boundary, drawn as points.
    points: [&'static str; 2],
}

/// The families drawn: the drift allowance, the restart delay and the storage margin.
pub(super) const FAMILIES: [Family; 3] = [
    Family {
        name: "region-drift",
        title: "The drift allowance against the clock errors",
        file: "clock-drift-covered",
        keys: &[
            "clock.node_error_ticks",
            "lock.drift_ticks",
            "clock.client_error_ticks",
        ],
        property: Property::MutualExclusion,
        points: ["clock-drift-covered", "clock-drift-uncovered"],
    },
    Family {
        name: "region-restart",
        title: "The restart delay against the TTL and the drift",
        file: "crash-delayed-restart-ttl-minus-drift",
        keys: &[
            "lock.ttl_ticks",
            "faults.crashes.restart_delay_ticks",
            "lock.drift_ticks",
        ],
        property: Property::MutualExclusion,
        points: [
            "crash-delayed-restart-ttl-minus-drift",
            "crash-delayed-restart-one-tick-short",
        ],
    },
    Family {
        name: "region-margin",
        title: "The storage check margin against the pause",
        file: "synchronous-bounds-margin-3",
        keys: &[
            "faults.pauses.max_ticks",
            "storage.check_margin_ticks",
            "lock.drift_ticks",
            "storage.max_delay_ticks",
        ],
        property: Property::StorageSafety,
        points: ["synchronous-bounds-margin-3", "synchronous-bounds-margin-2"],
    },
];

impl Family {
    /// Runs the synthesis and writes the page; also how long the synthesis took.
    pub(super) fn render(&self) -> Result<(String, f64)> {
        let start = Instant::now();
        let file = catalog::find(self.file).with_context(|| format!("{} is gone", self.file))?;
        let synthesis = synthesize_keys(file.file, file.text, self.keys, LIMIT, None)?;
        let names: Vec<String> = self.keys.iter().map(|k| key_symbol(k).to_owned()).collect();
        let regions = synthesis
            .regions(self.property)
            .with_context(|| format!("{} was not judged", self.property.name()))?;
        let mut points = Vec::new();
        for name in self.points {
            let point = catalog::find(name).with_context(|| format!("{name} is gone"))?;
            let values: Vec<i64> = (self.keys.iter())
                .map(|k| written_number(point.text, k).unwrap_or(0))
                .collect();
            points.push((name, values));
        }
        let body = self.body(&synthesis, regions, &names, &points);
        Ok((page(self.title, &body), start.elapsed().as_secs_f64()))
    }

    /// The page's text, the data and the script that draws it.
    fn body(
        &self,
        synthesis: &Synthesis,
        regions: &[Vec<Inequality>],
        names: &[String],
        points: &[(&str, Vec<i64>)],
    ) -> String {
        let property = self.property.name();
        let mut body = format!(
            "<nav class='crumbs'><a href='index.html'>The book</a> › <a href='index.html#regions'>The safe region, drawn</a></nav>\n\
             <h1>{}</h1>\n<p>Where <b>{property}</b> holds in <a href='{file}.html'><code>{file}</code></a> for every value of {keys} at once, \
             as one symbolic exploration proves it ({zones} zones): <b>{property}</b> {holds}. \
             Everywhere else a run breaks it. Pick the two keys across and up; the others stay where the sliders put them.</p>\n",
            escape(self.title),
            file = self.file,
            keys = escape(&names.join(", ")),
            zones = synthesis.zones,
            holds = escape(&holds_where(regions, names)),
        );
        body.push_str(
            "<div id='controls'></div>\n<svg id='region' class='region' width='640' height='440' role='img'></svg>\n\
             <p class='note'><span style='background:#cdeccf;padding:0 6px'>holds</span> proved to hold for these values · \
             <span style='background:#f6c4cb;padding:0 6px'>breaks</span> a run breaks it · \
             <span style='background:#eee;padding:0 6px'>outside</span> outside what the synthesis speaks for \
             (every guard at least one tick, a round timeout within the validity). A point is a catalog file: its page shows the run.</p>\n",
        );
        let _ = writeln!(
            body,
            "<script>const REGION={};{DRAW}</script>",
            data(synthesis, regions, names, points)
        );
        body
    }
}

/// Where the property holds, in words: each region turned round when it is one inequality,
/// else the regions where it breaks.
fn holds_where(regions: &[Vec<Inequality>], names: &[String]) -> String {
    if regions.is_empty() {
        return "holds for every value".to_owned();
    }
    let turned: Option<Vec<String>> = regions
        .iter()
        .map(|r| match r.as_slice() {
            [one] => Some(one.negated().display(names).to_string()),
            _ => None,
        })
        .collect();
    match turned {
        Some(turned) => format!("holds exactly where {}", turned.join(" and ")),
        None => {
            let each: Vec<String> = regions
                .iter()
                .map(|r| {
                    let parts: Vec<String> =
                        r.iter().map(|i| i.display(names).to_string()).collect();
                    format!("({})", parts.join(" and "))
                })
                .collect();
            format!("breaks exactly where {}", each.join(" or "))
        }
    }
}

/// The synthesis as the script reads it: the keys, their values in the file, the domain, the
/// regions, the points, and how far each axis runs.
fn data(
    synthesis: &Synthesis,
    regions: &[Vec<Inequality>],
    names: &[String],
    points: &[(&str, Vec<i64>)],
) -> String {
    let system = |list: &[Inequality]| -> serde_json::Value {
        list.iter()
            .map(|i| serde_json::json!({"a": i.coefficients, "b": i.bound}))
            .collect()
    };
    let high: Vec<i64> = (0..names.len())
        .map(|k| {
            let most = points.iter().map(|(_, v)| v[k]).chain([synthesis.base[k]]);
            most.max().unwrap_or(1).max(1) * 2 + 2
        })
        .collect();
    serde_json::json!({
        "names": names,
        "base": synthesis.base,
        "high": high,
        "domain": system(&synthesis.domain),
        "regions": regions.iter().map(|r| system(r)).collect::<Vec<_>>(),
        "points": points.iter().map(|(name, values)| serde_json::json!({"name": name, "values": values})).collect::<Vec<_>>(),
    })
    .to_string()
}

/// Draws the region: two selects for the axes, a slider per other key, a cell per whole
/// point coloured by the synthesis, and the points as links.
const DRAW: &str = r#"
(function(){
const R=REGION,n=R.names.length,svg=document.getElementById('region'),ctl=document.getElementById('controls');
let ax=[0,1],val=R.base.slice();
const sat=(s,p)=>s.every(i=>i.a.reduce((t,a,k)=>t+a*p[k],0)<=i.b);
const side=p=>!sat(R.domain,p)?'outside':R.regions.some(r=>sat(r,p))?'breaks':'holds';
function controls(){
  let h='';
  for(const [w,label] of [[0,'across'],[1,'up']]){
    h+=`<label>${label} <select data-axis='${w}'>`+R.names.map((m,k)=>`<option value='${k}'${k==ax[w]?' selected':''}>${m}</option>`).join('')+'</select></label> ';
  }
  for(let k=0;k<n;k++){ if(ax.includes(k)) continue;
    h+=`<label class='slider'>${R.names[k]} <input type='range' min='0' max='${R.high[k]}' value='${val[k]}' data-key='${k}'> <b>${val[k]}</b></label> `;
  }
  ctl.innerHTML=h;
  ctl.querySelectorAll('select').forEach(s=>s.onchange=()=>{const w=+s.dataset.axis,k=+s.value;if(ax[1-w]==k)ax[1-w]=ax[w];ax[w]=k;controls();draw();});
  ctl.querySelectorAll('input').forEach(s=>s.oninput=()=>{val[+s.dataset.key]=+s.value;s.nextElementSibling.textContent=s.value;draw();});
}
function draw(){
  const [x,y]=ax,W=640,H=440,L=48,B=36,nx=R.high[x]+1,ny=R.high[y]+1,cw=(W-L-8)/nx,ch=(H-B-8)/ny;
  let s='';
  for(let i=0;i<nx;i++)for(let j=0;j<ny;j++){const p=val.slice();p[x]=i;p[y]=j;const c=side(p);
    const f=c=='holds'?'#cdeccf':c=='breaks'?'#f6c4cb':'#eee';
    s+=`<rect class='cell ${c}' data-x='${i}' data-y='${j}' x='${L+i*cw}' y='${H-B-(j+1)*ch}' width='${cw-1}' height='${ch-1}' fill='${f}'><title>${R.names[x]}=${i}, ${R.names[y]}=${j}: ${c}</title></rect>`;}
  for(let i=0;i<nx;i+=Math.ceil(nx/16))s+=`<text x='${L+(i+0.5)*cw}' y='${H-B+14}' text-anchor='middle' font-size='11'>${i}</text>`;
  for(let j=0;j<ny;j+=Math.ceil(ny/16))s+=`<text x='${L-6}' y='${H-B-(j+0.5)*ch+4}' text-anchor='end' font-size='11'>${j}</text>`;
  s+=`<text x='${L+(W-L)/2}' y='${H-4}' text-anchor='middle' font-size='13' font-weight='600'>${R.names[x]}</text>`;
  s+=`<text x='14' y='${(H-B)/2}' font-size='13' font-weight='600' transform='rotate(-90 14 ${(H-B)/2})' text-anchor='middle'>${R.names[y]}</text>`;
  for(const p of R.points){const q=val.slice();q[x]=p.values[x];q[y]=p.values[y];
    const here=p.values.every((v,k)=>k==x||k==y||v==val[k]);
    const cx=L+(p.values[x]+0.5)*cw,cy=H-B-(p.values[y]+0.5)*ch;
    s+=`<a href='${p.name}.html' class='point' data-name='${p.name}'><circle cx='${cx}' cy='${cy}' r='6' fill='${here?'#222':'#fff'}' stroke='#222' stroke-width='2'><title>${p.name} (${R.names.map((m,k)=>m+'='+p.values[k]).join(', ')}): ${side(p.values)}</title></circle><text x='${cx+9}' y='${cy-8}' font-size='11'>${p.name}</text></a>`;}
  svg.innerHTML=s;
}
controls();draw();
})();
"#;
