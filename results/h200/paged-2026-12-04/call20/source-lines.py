# Warp stall samples per CUDA source line of the BF16 select, from call 20's source pages
# (ncu --page source --csv --print-source cuda,sass: src-one-pass.csv, src-chunk0.csv,
# src-chunk8.csv, 1.6 MB each, not kept): each line's share of the sum over the lines (an
# inlined line's samples count at the line and again at its call site), and the chunk-8 line's
# three largest stall reasons. Run in the folder of the CSVs; output: source-lines.txt.
import csv, sys, collections
def load(fn):
    per = collections.OrderedDict(); hdr=None; f=None
    stalls_tot = collections.Counter(); total=0
    for r in csv.reader(open(fn)):
        if not r: continue
        if r[0]=="File Path": f=r[1].split('/')[-1]; continue
        if r[0]=="Line No": hdr=r; continue
        if r[0]=="Function Name" or hdr is None: continue
        if r[0]=="" : continue  # sass rows
        m=dict(zip(hdr,r))
        try: s=int(m["Warp Stall Sampling (All Samples)"])
        except: continue
        key=(f,int(r[0]))
        st={k[6:]:int(m[k]) for k in hdr if k.startswith('stall_') and 'Not Issued' not in k and m.get(k,'-') not in ('-','')}
        per[key]=(s, r[1].strip()[:70], st)
        total+=s
    return per,total
res={n:load(f'src-{n}.csv') for n in ['one-pass','chunk0','chunk8']}
keys=set()
for n,(p,t) in res.items(): keys|=set(p)
rows=[]
for k in keys:
    fr=[res[n][0].get(k,(0,'',{}))[0]/res[n][1] for n in res]
    src=next(res[n][0][k][1] for n in res if k in res[n][0])
    rows.append((fr,k,src))
rows.sort(key=lambda x:-max(x[0]))
print('totals', {n:res[n][1] for n in res})
print('%-28s %6s %6s %6s  %s'%('line','1pass','ch0','ch8','source'))
for fr,k,src in rows[:45]:
    st=res['chunk8'][0].get(k,(0,'',{}))[2]
    top=sorted(st.items(),key=lambda x:-x[1])[:3]
    print('%-28s %5.1f%% %5.1f%% %5.1f%%  %-60s %s'%(f'{k[0]}:{k[1]}',100*fr[0],100*fr[1],100*fr[2],src,top))
